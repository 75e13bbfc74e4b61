package server

import "github.com/labstack/echo/v4"

func (s *Server) routesThreads(g *echo.Group) {}
