package server

import (
	"github.com/labstack/echo/v4"
)

// routesAPI registers the JSON API for programs (API tokens, per tenant).
func (s *Server) routesAPI(g *echo.Group) {
	g.GET("/evaluations/:id/state", s.apiEvaluationState)
}

// apiEvaluationState is get_workflow_state(evaluation_id, tenant) as JSON
// (the seed 004 shape); another tenant's id is a 404.
func (s *Server) apiEvaluationState(c echo.Context) error {
	st, err := s.app.EvaluationState(c.Request().Context(), currentUser(c).TenantID, c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(200, st)
}
