package server

import "github.com/labstack/echo/v4"

func (s *Server) routesProjects(g *echo.Group) {}
