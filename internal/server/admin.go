package server

import "github.com/labstack/echo/v4"

func (s *Server) routesAdmin(g *echo.Group) {}
