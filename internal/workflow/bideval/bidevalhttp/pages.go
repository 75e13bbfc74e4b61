package bidevalhttp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"weft/internal/fault"
	"weft/internal/graph"
	"weft/internal/runner"
	"weft/internal/server/mount"
	"weft/internal/usertext"
	"weft/internal/workflow/bideval"
	"weft/internal/workflow/bideval/bidevalpg"
	"weft/web/page"
	bidweb "weft/web/workflow/bideval"
)

// maxUpload is the largest bid document accepted: the largest file a console form takes.
const maxUpload = mount.MaxFile

// projectUpload stores a bid document (.txt, .md, .docx or .pdf, read by internal/doctext)
// for a supplier of the tender and splits it into chunks. Another tenant's tender or evaluation
// is a 404; a wrong file is a 400 with the reason.
func (h *handler) projectUpload(c echo.Context) error {
	u := mount.User(c)
	ctx := c.Request().Context()
	if c.FormValue("evaluation_id") == "" {
		if _, err := h.Store.Project(ctx, u.TenantID, c.Param("id")); err != nil {
			return err // another tenant's tender stays a 404
		}
		return h.renderProjectWith(c, http.StatusBadRequest, nil, "", bidweb.ProjectUploadVM{Error: "Choose the supplier whose bid this document belongs to.",
			Title: strings.TrimSpace(c.FormValue("title"))})
	}
	ev, err := h.Store.Evaluation(ctx, u.TenantID, c.FormValue("evaluation_id"))
	if err != nil {
		return err
	}
	if ev.ProjectID != c.Param("id") {
		return fmt.Errorf("evaluation %s of tender %s: %w", c.FormValue("evaluation_id"), c.Param("id"), graph.ErrNotFound)
	}
	title := strings.TrimSpace(c.FormValue("title"))
	// A refused upload shows the tender page again, with the message at the form and what
	// was typed kept.
	refuse := func(msg string) error {
		return h.renderProjectWith(c, http.StatusBadRequest, nil, "", bidweb.ProjectUploadVM{Error: msg, EvaluationID: ev.ID, Title: title})
	}
	if err := usertext.Check("the title", title); err != nil {
		title = usertext.Strip(title) // shown again in the form, without it
		return refuse(mount.Sentence(err.Error()) + ". Type it again without it.")
	}
	if title == "" || utf8.RuneCountInString(title) > 200 {
		return refuse("Give the document a title (up to 200 characters).")
	}
	fh, err := c.FormFile("file")
	if err != nil {
		return refuse("Choose a file to upload.")
	}
	if fh.Size > maxUpload {
		return refuse(fmt.Sprintf("The file is larger than %d MB.", maxUpload>>20))
	}
	body, media, msg, err := h.readUpload(ctx, fh)
	if err != nil {
		return err
	}
	if msg != "" {
		return refuse(msg)
	}
	_, n, err := h.storeBidDocument(ctx, u.TenantID, u.ID, ev, title, media, body)
	if dup := (*bidevalpg.DuplicateDocument)(nil); errors.As(err, &dup) {
		return refuse(dup.Error() + ".")
	}
	if err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, bideval.ProjectPath(ev.ProjectID)+"?uploaded="+strconv.Itoa(n))
}

// projectWithdraw withdraws one of the tender's bid documents (its form asks for a
// confirmation first): evaluations started from then on no longer search it, and the
// evidence that cites it keeps its links. Another tenant's tender or document is a 404; a
// document withdrawn already gets the page again with a 409 and the reason.
func (h *handler) projectWithdraw(c echo.Context) error {
	u := mount.User(c)
	return h.projectDocumentChange(c, "withdrawn", func(ctx context.Context, projectID string) error {
		err := h.Store.WithdrawDocument(ctx, u.TenantID, projectID, c.Param("did"), u.ID)
		if errors.Is(err, bidevalpg.ErrWithdrawn) {
			return fault.New(fault.Business, "WF_DOCUMENT_WITHDRAWN", "That document was withdrawn already; nothing changed.")
		}
		return err
	})
}

// projectRestore puts a withdrawn bid document back: retrieval searches it again. A document
// that is not withdrawn, or whose text the bid has again (added after the withdrawal), gets
// the page again with a 409 and the reason.
func (h *handler) projectRestore(c echo.Context) error {
	u := mount.User(c)
	return h.projectDocumentChange(c, "restored", func(ctx context.Context, projectID string) error {
		err := h.Store.RestoreDocument(ctx, u.TenantID, projectID, c.Param("did"), u.ID)
		var dup *bidevalpg.DuplicateDocument
		switch {
		case errors.Is(err, bidevalpg.ErrNotWithdrawn):
			return fault.New(fault.Business, "WF_DOCUMENT_NOT_WITHDRAWN", "That document is not withdrawn; nothing changed.")
		case errors.As(err, &dup):
			return fault.New(fault.Business, "WF_DOCUMENT_DUPLICATE", fmt.Sprintf(
				"This bid has the same text again, as “%s” (added %s): restored, it would count twice. Withdraw that one first; nothing changed.",
				dup.Title, dup.Added.UTC().Format("2006-01-02 15:04 UTC")))
		}
		return err
	})
}

// projectDocumentChange runs a withdrawal or a restore on the tender's page: done, it goes
// back to the page with the notice ?<done>=1; refused with a 4xx, it shows the page again
// with the reason. Another tenant's tender is a 404.
func (h *handler) projectDocumentChange(c echo.Context, done string, change func(context.Context, string) error) error {
	ctx := c.Request().Context()
	p, err := h.Store.Project(ctx, mount.User(c).TenantID, c.Param("id"))
	if err != nil {
		return err
	}
	if err := change(ctx, p.ID); err != nil {
		status, code, msg := h.Explain(err)
		if status >= 500 {
			return err
		}
		return h.renderProject(c, status, &page.AlertVM{Kind: "info", Message: msg, Code: code}, "")
	}
	return c.Redirect(http.StatusSeeOther, bideval.ProjectPath(p.ID)+"?"+done+"=1")
}

// documentVM is a bid document as the pages show it; names (UserNames) names who withdrew it.
func (h *handler) documentVM(d bidevalpg.Document, names func() map[string]string) bidweb.ProjectDocumentVM {
	v := bidweb.ProjectDocumentVM{ID: d.ID, Supplier: d.Supplier, Title: d.Title, Size: page.Bytes(d.Size), Chunks: d.Chunks,
		Added: d.CreatedAt, Withdrawn: d.WithdrawnAt}
	if d.WithdrawnAt != nil {
		v.WithdrawnBy = h.ActorName(names(), d.WithdrawnBy)
	}
	return v
}

// projectPage is a tender's page; as an htmx partial it is the results
// region (its periodic refresh while evaluations run).
func (h *handler) projectPage(c echo.Context) error {
	notice, query := projectNotice(c.QueryParams())
	return h.renderProject(c, http.StatusOK, notice, query)
}

// projectNotice is the notice an action's redirect asks for (?uploaded=, ?withdrawn=, ?restored=,
// ?started= and ?skipped=), and those parameters alone, encoded: the results region's refresh asks for
// them too, so the notice stays while the evaluations it speaks of run.
func projectNotice(q url.Values) (*page.AlertVM, string) {
	keep := url.Values{}
	var notice *page.AlertVM
	if n, err := strconv.Atoi(q.Get("uploaded")); err == nil && n > 0 {
		notice = &page.AlertVM{Kind: "ok", Message: fmt.Sprintf("Document added: %s. Start the evaluation again to score with it.",
			page.Plural(int64(n), "chunk", "chunks"))}
		keep.Set("uploaded", strconv.Itoa(n))
	}
	if q.Get("restored") == "1" {
		notice = &page.AlertVM{Kind: "ok", Message: "Document restored. Evaluations that search this bid from now on use it again: start the supplier's evaluation again to score with it."}
		keep = url.Values{"restored": {"1"}}
	}
	if q.Get("withdrawn") == "1" {
		notice = &page.AlertVM{Kind: "ok", Message: "Document withdrawn. Evaluations that search this bid from now on leave it out: start the supplier's evaluation again to score without it (one waiting for a review, once the review is answered). Reviews and reports that cite it mark it withdrawn."}
		keep = url.Values{"withdrawn": {"1"}}
	}
	if n, err := strconv.Atoi(q.Get("started")); err == nil && n > 0 {
		keep = url.Values{"started": {strconv.Itoa(n)}}
		skipped, err := strconv.Atoi(q.Get("skipped"))
		if err == nil && skipped > 0 {
			keep.Set("skipped", strconv.Itoa(skipped))
		}
		if ev := q.Get("evaluation"); ev != "" && n == 1 {
			keep.Set("evaluation", ev) // named by its supplier once the evaluations are read
		}
		notice = projectStartedNotice(n, max(skipped, 0), "")
	}
	return notice, keep.Encode()
}

// renderProject renders the tender's page (or its results region for htmx)
// with a notice; noticeQuery is what asks for it again (see projectNotice).
func (h *handler) renderProject(c echo.Context, status int, notice *page.AlertVM, noticeQuery string) error {
	return h.renderProjectWith(c, status, notice, noticeQuery, bidweb.ProjectUploadVM{})
}

// renderProjectWith is renderProject with the upload form's state.
func (h *handler) renderProjectWith(c echo.Context, status int, notice *page.AlertVM, noticeQuery string, up bidweb.ProjectUploadVM) error {
	ctx := c.Request().Context()
	tenant := mount.User(c).TenantID
	p, err := h.Store.Project(ctx, tenant, c.Param("id"))
	if err != nil {
		return err
	}
	res, err := h.projectResults(ctx, c, p.ID)
	if err != nil {
		return err
	}
	res.Notice, res.NoticeQuery = notice, noticeQuery
	if q, _ := url.ParseQuery(noticeQuery); q.Get("evaluation") != "" {
		// One evaluation started: say whose, as the answer to the start itself did.
		for _, r := range res.Rows {
			if r.ID == q.Get("evaluation") {
				res.Notice = projectStartedNotice(1, 0, r.Supplier)
			}
		}
	}
	if mount.IsHTMX(c) {
		return mount.Render(c, status, bidweb.ProjectResults(res))
	}
	docs, err := h.Store.ProjectDocuments(ctx, tenant, p.ID)
	if err != nil {
		return err
	}
	dv := make([]bidweb.ProjectDocumentVM, len(docs))
	names := h.UserNames(ctx, tenant)
	for i, d := range docs {
		dv[i] = h.documentVM(d, names)
	}
	sup, err := h.suppliersVM(c, p.ID)
	if err != nil {
		return err
	}
	m := h.Meta(c, p.Name, "dashboard")
	return mount.Render(c, status, bidweb.Project(m, bidweb.ProjectVM{ID: p.ID, Name: p.Name, Description: p.Description,
		Budget: bideval.Money(p.Budget, p.Currency), RulePackVersion: p.RulePackVersion, HardRules: p.HardRules,
		Criteria: p.Criteria, Created: p.CreatedAt, Results: res, Upload: up, Documents: dv,
		Reference: p.Reference, Deadline: p.Deadline, Suppliers: sup}))
}

// projectEvaluation is an evaluation with its current job (zero when it has
// none, or the job is gone).
type projectEvaluation struct {
	bidevalpg.Evaluation
	Job runner.Job
}

// active: the evaluation's job has not finished, so it cannot be started.
func (e projectEvaluation) active() bool { return e.Job.ID != "" && !e.Job.Status.Terminal() }

// loadProjectEvaluations loads a tender's evaluations and their jobs.
func (h *handler) loadProjectEvaluations(ctx context.Context, tenant, projectID string) ([]projectEvaluation, error) {
	evs, err := h.Store.ProjectEvaluations(ctx, tenant, projectID)
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(evs))
	for _, e := range evs {
		if e.JobID != "" {
			ids = append(ids, e.JobID)
		}
	}
	jobs, err := h.Jobs.JobsByID(ctx, tenant, ids)
	if err != nil {
		return nil, err
	}
	out := make([]projectEvaluation, len(evs))
	for i, e := range evs {
		out[i] = projectEvaluation{Evaluation: e, Job: jobs[e.JobID]}
	}
	return out, nil
}

// projectResults is the results region of a tender: each evaluation's
// status (its job's while the job has not finished), and the completed
// evaluations ranked by total (rejected bids are not ranked).
func (h *handler) projectResults(ctx context.Context, c echo.Context, projectID string) (bidweb.ProjectResultsVM, error) {
	v := bidweb.ProjectResultsVM{ProjectID: projectID, CSRF: mount.CSRFToken(c)}
	evs, err := h.loadProjectEvaluations(ctx, mount.User(c).TenantID, projectID)
	if err != nil {
		return v, err
	}
	tenant := mount.User(c).TenantID
	p, err := h.Store.Project(ctx, tenant, projectID)
	if err != nil {
		return v, err
	}
	for _, e := range evs {
		row := bidweb.ProjectEvalVM{ID: e.ID, Supplier: e.Supplier, ThreadID: e.ThreadID,
			Active: e.active(), HasRun: e.JobID != "", Current: p.RulePackVersion}
		if e.ReportVersion > 0 { // the version its latest report was scored with
			if r, ok, err := h.Store.LatestReport(ctx, tenant, e.ID); err != nil {
				return v, err
			} else if ok {
				row.RanWith = r.RulePackVersion
			}
		}
		switch {
		case row.Active || (e.Job.ID != "" && e.Status != "completed"):
			row.Status = string(e.Job.Status)
		default:
			row.Status = e.Status
		}
		if e.Status == "completed" {
			row.Outcome = e.Outcome
			if e.Outcome != bideval.OutcomeDisqualified { // not scored: its report says which rule
				row.Total = e.TotalScore
			}
		}
		if e.Job.Status == runner.Failed && len(e.Job.Errors) > 0 {
			row.ErrorCode = e.Job.Errors[len(e.Job.Errors)-1].Code
		}
		if row.Active {
			v.Active++
			if e.Job.Status != runner.WaitingReview {
				v.Moving++
			}
		} else {
			v.Startable++
			if row.HasRun {
				v.Reruns++
			}
		}
		v.Rows = append(v.Rows, row)
	}
	// Rank: best total first; equal totals share a rank (bideval.SharedRanks, as the reports).
	var ranked []int
	for i, r := range v.Rows {
		if r.Status == "completed" && r.Total != nil && bideval.Ranked(r.Outcome) {
			ranked = append(ranked, i)
		}
	}
	slices.SortStableFunc(ranked, func(a, b int) int {
		x, y := *v.Rows[a].Total, *v.Rows[b].Total
		switch {
		case x > y:
			return -1
		case x < y:
			return 1
		}
		return 0
	})
	totals := make([]float64, len(ranked))
	for k, i := range ranked {
		totals[k] = *v.Rows[i].Total
	}
	ranks := bideval.SharedRanks(totals)
	for k, i := range ranked {
		v.Rows[i].Rank, v.Rows[i].Top = ranks[k], ranks[k] == 1
		v.Ranking = append(v.Ranking, v.Rows[i])
	}
	return v, nil
}

// projectWithEvaluations loads the request's tender of the user's tenant
// and its evaluations.
func (h *handler) projectWithEvaluations(c echo.Context) (bidevalpg.Project, []projectEvaluation, error) {
	ctx, tenant := c.Request().Context(), mount.User(c).TenantID
	p, err := h.Store.Project(ctx, tenant, c.Param("id"))
	if err != nil {
		return p, nil, err
	}
	evs, err := h.loadProjectEvaluations(ctx, tenant, p.ID)
	return p, evs, err
}

// projectStartOne starts one evaluation of the tender. Another tender's or
// tenant's evaluation is a 404; one that is in progress a 409.
func (h *handler) projectStartOne(c echo.Context) error {
	ctx := c.Request().Context()
	u := mount.User(c)
	p, evs, err := h.projectWithEvaluations(c)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(evs, func(e projectEvaluation) bool { return e.ID == c.Param("eid") })
	if i < 0 {
		return fmt.Errorf("evaluation %s of tender %s: %w", c.Param("eid"), p.ID, graph.ErrNotFound)
	}
	e := evs[i]
	if e.active() {
		return h.projectRefused(c, fault.New(fault.Business, bideval.CodeEvaluationRunning,
			fmt.Sprintf("The evaluation of %s is already in progress (%s). Start it again once it has finished.", e.Supplier, e.Job.Status.Words())))
	}
	if _, err := h.StartEvaluation(ctx, u.TenantID, e.ID, u.ID); err != nil {
		return h.projectRefused(c, err)
	}
	return h.projectStarted(c, p.ID, 1, 0, e.Supplier, e.ID)
}

// projectStartAll starts every evaluation of the tender that is not in
// progress.
func (h *handler) projectStartAll(c echo.Context) error {
	ctx := c.Request().Context()
	u := mount.User(c)
	p, evs, err := h.projectWithEvaluations(c)
	if err != nil {
		return err
	}
	started, skipped := 0, 0
	for _, e := range evs {
		if e.active() {
			skipped++
			continue
		}
		if _, err := h.StartEvaluation(ctx, u.TenantID, e.ID, u.ID); err != nil {
			var fe *fault.Error
			if errors.As(err, &fe) && fe.Code == bideval.CodeEvaluationRunning {
				skipped++
				continue // started by someone else meanwhile
			}
			return h.projectRefused(c, err)
		}
		started++
	}
	if started == 0 {
		msg := "Every evaluation of this tender is already in progress. Start them again once they have finished."
		if len(evs) == 0 {
			msg = "This tender has no suppliers to evaluate yet."
		}
		return h.projectRefused(c, fault.New(fault.Business, bideval.CodeEvaluationRunning, msg))
	}
	return h.projectStarted(c, p.ID, started, skipped, "", "")
}

// projectStarted answers a successful start: the updated region for htmx,
// else a redirect back to the page (which says what started).
func (h *handler) projectStarted(c echo.Context, projectID string, n, skipped int, supplier, evaluationID string) error {
	q := url.Values{"started": {strconv.Itoa(n)}}
	if skipped > 0 {
		q.Set("skipped", strconv.Itoa(skipped))
	}
	if evaluationID != "" {
		q.Set("evaluation", evaluationID)
	}
	if mount.IsHTMX(c) {
		return h.renderProject(c, http.StatusOK, projectStartedNotice(n, skipped, supplier), q.Encode())
	}
	return c.Redirect(http.StatusSeeOther, bideval.ProjectPath(projectID)+"?"+q.Encode())
}

// projectRefused shows why a start was refused: htmx puts the message in the
// page's alert slot (the error handler); a plain form post gets the page
// again with the message on top and the 4xx status. Server errors go to the
// error handler either way.
func (h *handler) projectRefused(c echo.Context, err error) error {
	status, code, msg := h.Explain(err)
	if mount.IsHTMX(c) || status >= 500 {
		return err
	}
	if rerr := h.renderProject(c, status, &page.AlertVM{Kind: "error", Message: msg, Code: code}, ""); rerr != nil {
		return rerr
	}
	return nil
}

// projectStartedNotice says what a start did; skipped counts the evaluations "Start all"
// left alone because they were still in progress (running, or waiting for a review).
func projectStartedNotice(n, skipped int, supplier string) *page.AlertVM {
	msg := fmt.Sprintf("Started %d evaluations. They run as soon as a worker picks them up.", n)
	switch {
	case supplier != "":
		msg = fmt.Sprintf("Started the evaluation of %s. It runs as soon as a worker picks it up.", supplier)
	case n == 1:
		msg = "Started 1 evaluation. It runs as soon as a worker picks it up."
	}
	if skipped > 0 {
		msg += fmt.Sprintf(" %s still in progress (running or waiting for a review) left as %s.",
			page.Plural(int64(skipped), "evaluation", "evaluations"), map[bool]string{true: "it was", false: "they were"}[skipped == 1])
	}
	return &page.AlertVM{Kind: "ok", Message: msg}
}

// projectDocument shows one of a tender's bid documents: its text in the chunks that
// retrieval searches and evidence cites, each with its id. Another tender's document, or
// another tenant's, is a 404.
func (h *handler) projectDocument(c echo.Context) error {
	ctx, tenant := c.Request().Context(), mount.User(c).TenantID
	p, err := h.Store.Project(ctx, tenant, c.Param("id"))
	if err != nil {
		return err
	}
	d, chunks, err := h.Store.ProjectDocument(ctx, tenant, p.ID, c.Param("did"))
	if err != nil {
		return err
	}
	v := bidweb.DocumentVM{ProjectID: p.ID, Project: p.Name, ProjectLinks: h.MayOpen(mount.User(c).Role, bideval.ProjectPath(p.ID)),
		Doc: h.documentVM(d, h.UserNames(ctx, tenant))}
	for _, ch := range chunks {
		v.Chunks = append(v.Chunks, bidweb.DocumentChunkVM{ID: ch.ID, Seq: ch.Seq, Text: ch.Text})
	}
	active := ""
	if v.ProjectLinks {
		active = "dashboard"
	}
	m := h.Meta(c, d.Title+" · "+p.Name, active)
	return mount.Render(c, http.StatusOK, bidweb.Document(m, v))
}
