package app

import (
	"context"
	"slices"

	"weft/internal/graph"
	"weft/internal/llm"
	"weft/internal/runner"
	"weft/internal/workflow"
	"weft/internal/workflow/bideval"
	"weft/internal/workflow/bideval/bidevalhttp"
	"weft/internal/workflow/bideval/bidevalpg"
	"weft/internal/workflow/contractreview"
	"weft/internal/workflow/dataagent"
	"weft/internal/workflow/dataagent/dataagentpg"
	"weft/internal/workflow/pagegen"
	"weft/internal/workflow/tour"
)

// The one file of the package that names workflows: each is registered here (one Definition
// each), with its store adapter and its own pages where it has them (the App's Mounts), and
// its demo data is loaded from here (the App's Demos). Adding a workflow is a few lines in
// registerWorkflows.

// registerWorkflows builds each workflow on the App's stores and registers it, with the
// routes of its own pages and its demo data.
func registerWorkflows(a *App) error {
	bid := bidevalpg.New(a.DB)
	bg, err := bideval.New(bideval.Deps{
		Data: bid, LLM: a.LLM, Checkpointer: a.Checkpoints,
		IssueToken: a.Runner.IssueTokenInRun,
		RecordFailure: func(ctx context.Context, f bideval.Failure) (string, error) {
			return a.Runner.RecordFailure(ctx, runner.Failure{Class: f.Class, Code: f.Code, Message: f.Message, Node: f.Node, CheckpointID: f.CheckpointID})
		},
	})
	if err != nil {
		return err
	}
	tg, err := tour.New(a.Checkpoints, 0)
	if err != nil {
		return err
	}
	bidDef := bideval.Definition(bg, bid)
	// The API's domain state of an evaluation's thread is get_workflow_state (seed 004).
	bidDef.Views.State = func(ctx context.Context, t workflow.Thread) (any, error) {
		ev, err := bid.EvaluationOfThread(ctx, t.TenantID, t.ThreadID)
		if err != nil {
			return nil, err
		}
		return bid.WorkflowState(ctx, bg, t.TenantID, ev.ID)
	}
	crDef, err := contractreview.Definition(contractreview.Deps{Provider: a.LLM, Artifacts: a.RunArtifacts(), Checkpointer: a.Checkpoints})
	if err != nil {
		return err
	}
	pgDef, err := pagegen.Definition(pagegen.Deps{LLM: a.LLM, Artifacts: a.RunArtifacts(), Checkpointer: a.Checkpoints})
	if err != nil {
		return err
	}
	daDef, err := dataagentpg.Definition(a.DB.Pool(), dataagent.Deps{LLM: a.LLM, Artifacts: a.RunArtifacts(), Checkpointer: a.Checkpoints})
	if err != nil {
		return err
	}
	for _, d := range []workflow.Definition{
		bidDef,
		crDef,
		pgDef,
		daDef,
		{Name: "tour", Title: "Engine tour", Graph: tg, CheckInput: tour.CheckInput, ExampleInput: tour.ExampleInput, SubjectOf: tour.SubjectOf, ReasonLabels: tour.ReasonLabels,
			Description: "A small graph that shows the engine: a Send fan-out into parallel research nodes, one per topic of the question (their progress streams live), a join that drafts an answer, and an approval interrupt."},
	} {
		if err := a.Registry.Register(d); err != nil {
			return err
		}
	}
	pages := bidevalhttp.Deps{Store: bid, Graph: bg, Jobs: a.Jobs, Audit: a.Audit, Start: a.StartValues}
	a.Mounts = append(a.Mounts, bidevalhttp.Mount(pages))
	a.Demos = append(a.Demos, func(ctx context.Context) error { return bidDemo(ctx, pages) }, func(ctx context.Context) error { return contractDemo(ctx, a) },
		func(ctx context.Context) error { return pageDemo(ctx, a) }, func(ctx context.Context) error { return dataAgentDemo(ctx, a) })
	return nil
}

// contractDemo starts a review of the English sample contract (FIDIC Silver Book, for the
// Contractor) through the start form, as a user would; it waits for approval at its first
// clause with changes. Both sample contracts are files of its thread, to download and start
// reviews of from the start form.
func contractDemo(ctx context.Context, a *App) error {
	demos := contractreview.DemoContracts()
	en := demos[slices.IndexFunc(demos, func(d contractreview.Demo) bool { return d.Language == "en" })]
	j, err := a.StartValues(ctx, DemoTenant, contractreview.Name, workflow.Values{
		contractreview.FieldContract: workflow.File{Name: en.Filename, Data: []byte(en.Text)},
		contractreview.FieldOurParty: en.OurParty, contractreview.FieldLanguage: en.Language,
		contractreview.FieldDomain: contractreview.DomainSilverBook, contractreview.FieldMaxRetries: float64(contractreview.DefaultMaxRetries),
	}, "system:demo")
	if err != nil {
		return err
	}
	for _, d := range demos {
		if _, err := a.Artifacts.Put(ctx, DemoTenant, j.ThreadID, j.ID, workflow.Artifact{Key: "samples/" + d.Filename, Name: d.Filename,
			ContentType: "text/plain; charset=utf-8", Data: []byte(d.Text)}); err != nil {
			return err
		}
	}
	return nil
}

// pageDemo starts the Brewly page-generation session (English, with the aesthetic check)
// through the start form; it waits for feedback at refine_gate.
func pageDemo(ctx context.Context, a *App) error {
	d := pagegen.Demos()[0]
	_, err := a.StartValues(ctx, DemoTenant, pagegen.Name, workflow.Values{pagegen.FieldRequest: d.Request.Text,
		pagegen.FieldAesthetic: d.Request.Aesthetic}, "system:demo")
	return err
}

// dataAgentDemo creates the demo analytics data set (schema analytics: two years of orders up
// to the end of last month, its analyst role, its business notes) and asks the demo question,
// without a review, so its thread shows a finished answer to follow up on.
func dataAgentDemo(ctx context.Context, a *App) error {
	if err := dataagentpg.InstallDemo(ctx, a.DB.Pool(), dataagentpg.Demo{Schema: dataagent.DefaultSchema}); err != nil {
		return err
	}
	_, err := a.StartValues(ctx, DemoTenant, dataagent.Name, workflow.Values{dataagent.FieldQuestion: dataagent.DemoQuestion}, "system:demo")
	return err
}

// bidDemo loads bid evaluation's demo tenders (one per demo tenant) and starts the demo
// tenant's evaluations.
func bidDemo(ctx context.Context, bid bidevalhttp.Deps) error {
	d := bideval.Demo(DemoTenant, "Demo Procurement Co.")
	if _, err := bid.Store.SeedDemo(ctx, d); err != nil {
		return err
	}
	if _, err := bid.Store.SeedDemo(ctx, bideval.Demo(OtherTenant, "Acme Holdings")); err != nil {
		return err
	}
	for _, s := range d.Suppliers {
		if _, err := bid.StartEvaluation(ctx, DemoTenant, "ev_"+s.ID, "system:demo"); err != nil {
			return err
		}
	}
	return nil
}

// Bid is bid evaluation's parts in a (its store, graph and what its pages use), for the tests
// and tools that read or start evaluations directly.
func Bid(a *App) bidevalhttp.Deps {
	d, _ := a.Registry.Get(bideval.Name)
	g, _ := d.Graph.(*graph.Graph[bideval.State])
	return bidevalhttp.Deps{Store: bidevalpg.New(a.DB), Graph: g, Jobs: a.Jobs, Audit: a.Audit, Start: a.StartValues}
}

// Standalone is what workflows run on outside a platform process (weft run): a checkpointer,
// a folder's artifact store and the model.
type Standalone struct {
	Checkpointer graph.Checkpointer
	Artifacts    workflow.ArtifactStore
	LLM          llm.Provider
}

// StandaloneWorkflows registers the workflows that run without the platform's database (all
// but bid evaluation, whose tenders live in PostgreSQL), for weft run.
func StandaloneWorkflows(d Standalone) (*workflow.Registry, error) {
	reg := workflow.NewRegistry()
	tg, err := tour.New(d.Checkpointer, 0)
	if err != nil {
		return nil, err
	}
	crDef, err := contractreview.Definition(contractreview.Deps{Provider: d.LLM, Artifacts: d.Artifacts, Checkpointer: d.Checkpointer})
	if err != nil {
		return nil, err
	}
	pgDef, err := pagegen.Definition(pagegen.Deps{LLM: d.LLM, Artifacts: d.Artifacts, Checkpointer: d.Checkpointer})
	if err != nil {
		return nil, err
	}
	for _, def := range []workflow.Definition{crDef, pgDef,
		{Name: "tour", Title: "Engine tour", Graph: tg, CheckInput: tour.CheckInput, ExampleInput: tour.ExampleInput, SubjectOf: tour.SubjectOf}} {
		if err := reg.Register(def); err != nil {
			return nil, err
		}
	}
	return reg, nil
}
