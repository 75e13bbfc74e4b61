package server

import "github.com/labstack/echo/v4"

func (s *Server) routesReviews(g *echo.Group) {}
