// Package bidevalhttp is bid evaluation's own pages and API call, which the generic console
// has no place for: a tender's page (its evaluations with their start buttons, their
// comparison, its bid documents with upload, withdraw and restore), a bid document's page,
// and GET /api/v1/evaluations/{id}/state (seed 004's get_workflow_state). The App's wiring
// (internal/app/workflows.go) mounts it on the server through internal/server/mount; the
// server never imports it. It imports echo, mount, the core stores it reads (jobs, audit),
// bidevalpg, internal/doctext (bid documents as PDF and DOCX) and the templ pages of
// web/workflow/bideval. Tender setup (setup.go, setup_api.go): a new tender, its rule pack
// (form, YAML import and export, versions) and its suppliers, in the console and under
// /api/v1/tenders.
package bidevalhttp

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"weft/internal/auth"
	"weft/internal/fault"
	"weft/internal/graph"
	"weft/internal/postgres"
	"weft/internal/runner"
	"weft/internal/server/mount"
	"weft/internal/workflow"
	"weft/internal/workflow/bideval"
	"weft/internal/workflow/bideval/bidevalpg"
)

// StartFunc starts a run of a workflow with a start form from its values (app.App.StartValues).
type StartFunc func(ctx context.Context, tenantID, name string, v workflow.Values, actor string) (runner.Job, error)

// Deps are what the pages read and change.
type Deps struct {
	Store *bidevalpg.Store
	Graph *graph.Graph[bideval.State]
	Jobs  *postgres.JobStore
	Audit *postgres.Audit
	Start StartFunc
}

// handler serves the pages with the server's pieces (r).
type handler struct {
	Deps
	mount.Routes
}

// Mount returns the routes of the pages and the API call, for the server to add.
func Mount(d Deps) mount.Func {
	return func(r mount.Routes) {
		h := &handler{Deps: d, Routes: r}
		h.routesProjects(r.Pages)
		h.routesSetup(r.Pages)
		h.routesSetupAPI(r.API)
		r.API.GET("/evaluations/:id/state", h.apiEvaluationState)
	}
}

func (h *handler) routesProjects(g *echo.Group) {
	h.Section("/projects", auth.PM, auth.Admin)
	// A bid document: reviewers come to it from a review's evidence (only the document).
	h.OpenTo("/projects/*/documents/*")
	pm := h.RequireRole(auth.PM, auth.Admin)
	g.GET("/projects/:id", h.projectPage, pm)
	g.POST("/projects/:id/start", h.projectStartAll, pm)
	g.POST("/projects/:id/evaluations/:eid/start", h.projectStartOne, pm)
	g.POST("/projects/:id/documents", h.projectUpload, pm)
	g.POST("/projects/:id/documents/:did/withdraw", h.projectWithdraw, pm)
	g.POST("/projects/:id/documents/:did/restore", h.projectRestore, pm)
	g.GET("/projects/:id/documents/:did", h.projectDocument, h.RequireRole(auth.PM, auth.Admin, auth.Reviewer))
	// A refused upload answers on the upload's address; reloading it comes back here.
	// The forms' addresses opened (reloading a refused form's answer, a typed link) lead back
	// to the tender, as long as it is the tenant's.
	toProject := func(c echo.Context) error {
		p, err := h.Store.Project(c.Request().Context(), mount.User(c).TenantID, c.Param("id"))
		if err != nil {
			return err
		}
		return c.Redirect(http.StatusSeeOther, bideval.ProjectPath(p.ID))
	}
	g.GET("/projects/:id/documents", toProject, pm)
	g.GET("/projects/:id/start", toProject, pm)
	g.GET("/projects/:id/documents/:did/withdraw", toProject, pm)
	g.GET("/projects/:id/documents/:did/restore", toProject, pm)
	g.GET("/projects/:id/evaluations/:eid/start", toProject, pm)
}

// StartEvaluation starts a run of an evaluation's thread through the workflow's start form
// (as its tender's page does): an evaluation whose run has not finished is refused with
// bideval.CodeEvaluationRunning (a 409) naming where that run is, one that is not the
// tenant's is graph.ErrNotFound.
func (d Deps) StartEvaluation(ctx context.Context, tenantID, evaluationID, actor string) (runner.Job, error) {
	j, err := d.Start(ctx, tenantID, bideval.Name, workflow.Values{bideval.FieldEvaluationID: evaluationID}, actor)
	if errors.Is(err, postgres.ErrThreadBusy) { // started by another click a moment ago, or running
		where := ""
		if thread, err := d.Store.EvaluationThread(ctx, tenantID, evaluationID); err == nil {
			if jobs, err := d.Jobs.ThreadJobs(ctx, tenantID, thread, 1); err == nil && len(jobs) > 0 && !jobs[0].Status.Terminal() {
				where = " (" + jobs[0].Status.Words() + ")"
			}
		}
		return runner.Job{}, fault.New(fault.Business, bideval.CodeEvaluationRunning,
			fmt.Sprintf("evaluation %s has a run that has not finished%s: start it again once that run ends", evaluationID, where))
	}
	var fe workflow.FieldErrors
	if errors.As(err, &fe) {
		return runner.Job{}, fmt.Errorf("evaluation %s: %w", evaluationID, graph.ErrNotFound)
	}
	return j, err
}

// EvaluationState is get_workflow_state(evaluation_id, tenant): the seed 004 view of the
// evaluation's thread and job. Another tenant's id is graph.ErrNotFound.
func (d Deps) EvaluationState(ctx context.Context, tenantID, evaluationID string) (bideval.WorkflowState, error) {
	return d.Store.WorkflowState(ctx, d.Graph, tenantID, evaluationID)
}

// EvaluationValues is an evaluation thread's current state.
func (d Deps) EvaluationValues(ctx context.Context, threadID string) (bideval.State, error) {
	snap, err := d.Graph.GetState(ctx, graph.Config{ThreadID: threadID})
	if err != nil {
		return bideval.State{}, err
	}
	return snap.Values, nil
}

// apiEvaluationState is get_workflow_state(evaluation_id, tenant) as JSON (the seed 004
// shape); another tenant's id is a 404.
func (h *handler) apiEvaluationState(c echo.Context) error {
	st, err := h.EvaluationState(c.Request().Context(), mount.User(c).TenantID, c.Param("id"))
	if err != nil {
		return err
	}
	return h.JSON(c, http.StatusOK, st)
}
