package bidevalhttp

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"weft/internal/auth"
	"weft/internal/fault"
	"weft/internal/llm"
	"weft/internal/server/mount"
	"weft/internal/workflow/bideval"
	"weft/internal/workflow/bideval/bidevalpg"
	bidweb "weft/web/workflow/bideval"
)

// Tender setup pages: a new tender, its rule pack (form, YAML import and export, versions)
// and its suppliers. PMs and admins only, as the tender's page.
func (h *handler) routesSetup(g *echo.Group) {
	pm := h.RequireRole(auth.PM, auth.Admin)
	g.GET("/projects/new", h.newTenderPage, pm)
	g.POST("/projects", h.tenderCreate, pm)
	g.GET("/projects", func(c echo.Context) error { return c.Redirect(http.StatusSeeOther, "/projects/new") }, pm)
	g.GET("/projects/:id/rule-pack", h.rulePackPage, pm)
	g.POST("/projects/:id/rule-pack", h.rulePackSave, pm)
	g.POST("/projects/:id/rule-pack/import", h.rulePackImport, pm)
	g.GET("/projects/:id/rule-pack/import", h.toRulePack, pm)
	g.GET("/projects/:id/rule-pack.yaml", h.rulePackExport, pm)
	g.POST("/projects/:id/suppliers", h.supplierAdd, pm)
	g.POST("/projects/:id/suppliers/:sid/rename", h.supplierRename, pm)
	toProject := func(c echo.Context) error {
		p, err := h.Store.Project(c.Request().Context(), mount.User(c).TenantID, c.Param("id"))
		if err != nil {
			return err
		}
		return c.Redirect(http.StatusSeeOther, bideval.ProjectPath(p.ID)+"#suppliers")
	}
	g.GET("/projects/:id/suppliers", toProject, pm)
	g.GET("/projects/:id/suppliers/:sid/rename", toProject, pm)
}

func (h *handler) newTenderPage(c echo.Context) error {
	return mount.Render(c, http.StatusOK, bidweb.NewTender(h.Meta(c, "New tender", "dashboard"), bidweb.NewTenderVM{Currency: "EUR"}))
}

// parseDeadline reads a datetime-local value (UTC) or RFC 3339; "" is none.
func parseDeadline(s string) (*time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04", "2006-01-02T15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			t = t.UTC()
			return &t, nil
		}
	}
	return nil, fault.New(fault.Validation, fault.CodeValidation, fmt.Sprintf("the deadline %q is not a date and time such as 2027-03-01T12:00", s))
}

func parseBudget(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.ReplaceAll(strings.TrimSpace(s), ",", ""), 64)
	if err != nil {
		return 0, fault.New(fault.Validation, fault.CodeValidation, fmt.Sprintf("the budget %q is not a number", s))
	}
	return v, nil
}

func (h *handler) tenderCreate(c echo.Context) error {
	u := mount.User(c)
	vm := bidweb.NewTenderVM{Name: c.FormValue("name"), Reference: c.FormValue("reference"), Description: c.FormValue("description"),
		Budget: c.FormValue("budget"), Currency: c.FormValue("currency"), Deadline: c.FormValue("deadline")}
	id, err := func() (string, error) {
		budget, err := parseBudget(vm.Budget)
		if err != nil {
			return "", err
		}
		deadline, err := parseDeadline(vm.Deadline)
		if err != nil {
			return "", err
		}
		return h.Store.CreateTender(c.Request().Context(), u.TenantID, u.ID, bidevalpg.NewTender{Name: vm.Name, Reference: vm.Reference,
			Description: vm.Description, Currency: vm.Currency, Budget: budget, Deadline: deadline})
	}()
	if err != nil {
		status, _, msg := h.Explain(err)
		if status >= 500 {
			return err
		}
		vm.Error = msg
		return mount.Render(c, status, bidweb.NewTender(h.Meta(c, "New tender", "dashboard"), vm))
	}
	return c.Redirect(http.StatusSeeOther, bideval.RulePackPath(id)+"?created=1")
}

func (h *handler) toRulePack(c echo.Context) error {
	p, err := h.Store.Project(c.Request().Context(), mount.User(c).TenantID, c.Param("id"))
	if err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, bideval.RulePackPath(p.ID))
}

// rulePackVM is the rule pack page of the request's tender; form nil shows the version in use.
func (h *handler) rulePackVM(c echo.Context, form *bidweb.RulePackFormVM) (bidweb.RulePackVM, error) {
	ctx, tenant := c.Request().Context(), mount.User(c).TenantID
	p, err := h.Store.Project(ctx, tenant, c.Param("id"))
	if err != nil {
		return bidweb.RulePackVM{}, err
	}
	versions, err := h.Store.RulePacks(ctx, tenant, p.ID)
	if err != nil {
		return bidweb.RulePackVM{}, err
	}
	vm := bidweb.RulePackVM{ProjectID: p.ID, Project: p.Name, Current: p.RulePackVersion}
	names := h.UserNames(ctx, tenant)
	var current bideval.RulePack
	for _, v := range versions {
		vm.Versions = append(vm.Versions, bidweb.RulePackVersionVM{Version: v.Version, By: h.ActorName(names(), v.CreatedBy),
			At: v.CreatedAt.UTC().Format("2006-01-02 15:04"), Pinned: v.Pinned, Rules: len(v.Pack.HardRules), Criteria: len(v.Pack.Criteria)})
		if v.Pinned {
			current = v.Pack
		}
	}
	if form != nil {
		vm.Form = *form
	} else {
		vm.Form = formOf(current)
	}
	return vm, nil
}

// formOf is a rule pack as the form's rows, with two empty rows to add to each list.
func formOf(rp bideval.RulePack) bidweb.RulePackFormVM {
	num := func(v float64) string {
		if v == 0 {
			return ""
		}
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	var f bidweb.RulePackFormVM
	for _, r := range rp.HardRules {
		f.Rules = append(f.Rules, bidweb.RuleRowVM{ID: r.ID, Name: r.Name, Kind: r.Kind, Severity: r.Severity, Query: r.Query,
			Keywords: strings.Join(r.Keywords, ", "), Pattern: r.Pattern, Min: num(r.Min), Max: num(r.Max)})
	}
	for _, c := range rp.Criteria {
		var lines []string
		for _, n := range c.Rubric.Numbers {
			b := func(p *float64) string {
				if p == nil {
					return ""
				}
				return strconv.FormatFloat(*p, 'f', -1, 64)
			}
			lines = append(lines, n.Label+" | "+n.Pattern+" | "+b(n.Min)+" | "+b(n.Max))
		}
		topK := ""
		if c.TopK > 0 {
			topK = strconv.Itoa(c.TopK)
		}
		f.Criteria = append(f.Criteria, bidweb.CriterionRowVM{ID: c.ID, Name: c.Name, Weight: num(bideval.WeightPercent(c.Weight)),
			MaxScore: num(c.MaxScore), TopK: topK, Query: c.Query, Keywords: strings.Join(c.Rubric.Keywords, ", "), Numbers: strings.Join(lines, "\n")})
	}
	t := rp.Thresholds
	f.Thresholds = [5]string{num(t.MinConfidence), num(t.MinCitationCoverage), num(t.HighScore), num(t.OutlierDelta), strconv.Itoa(t.MinPeers)}
	if len(rp.Criteria) == 0 { // a first pack: the demo's gate as a start
		f.Thresholds = [5]string{"0.55", "0.8", "80", "35", "2"}
	}
	for range 2 {
		f.Rules = append(f.Rules, bidweb.RuleRowVM{Severity: bideval.SeverityFlag})
		f.Criteria = append(f.Criteria, bidweb.CriterionRowVM{MaxScore: "10"})
	}
	return f
}

// formValues is the form as sent (the rows as typed, for showing it again).
func formValues(q url.Values) bidweb.RulePackFormVM {
	var f bidweb.RulePackFormVM
	at := func(k string, i int) string {
		if v := q[k]; i < len(v) {
			return strings.TrimSpace(v[i])
		}
		return ""
	}
	for i := range q["hr_id"] {
		f.Rules = append(f.Rules, bidweb.RuleRowVM{ID: at("hr_id", i), Name: at("hr_name", i), Kind: at("hr_kind", i), Severity: at("hr_severity", i),
			Query: at("hr_query", i), Keywords: at("hr_keywords", i), Pattern: at("hr_pattern", i), Min: at("hr_min", i), Max: at("hr_max", i)})
	}
	for i := range q["cr_id"] {
		f.Criteria = append(f.Criteria, bidweb.CriterionRowVM{ID: at("cr_id", i), Name: at("cr_name", i), Weight: at("cr_weight", i),
			MaxScore: at("cr_max_score", i), TopK: at("cr_top_k", i), Query: at("cr_query", i), Keywords: at("cr_keywords", i), Numbers: at("cr_numbers", i)})
	}
	for i, l := range bidweb.ThresholdLabels {
		f.Thresholds[i] = strings.TrimSpace(q.Get("th_" + l[0]))
	}
	return f
}

// packOf reads the form's rows into a rule pack: rows without an id and name are left out;
// a number that does not read is a problem named by its field.
func packOf(f bidweb.RulePackFormVM) (bideval.RulePack, []bideval.Problem) {
	var (
		rp bideval.RulePack
		ps []bideval.Problem
	)
	number := func(field, s string) float64 {
		if s == "" {
			return 0
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			ps = append(ps, bideval.Problem{Field: field, Msg: fmt.Sprintf("%q is not a number", s)})
		}
		return v
	}
	split := func(s string) []string {
		var out []string
		for _, k := range strings.Split(s, ",") {
			if k = strings.TrimSpace(k); k != "" {
				out = append(out, k)
			}
		}
		return out
	}
	for _, r := range f.Rules {
		if r.ID == "" && r.Name == "" {
			continue
		}
		field := fmt.Sprintf("hard_rules[%d]", len(rp.HardRules))
		rp.HardRules = append(rp.HardRules, bideval.HardRule{ID: r.ID, Name: r.Name, Kind: r.Kind, Severity: r.Severity, Query: r.Query,
			Keywords: split(r.Keywords), Pattern: r.Pattern, Min: number(field+".min", r.Min), Max: number(field+".max", r.Max)})
	}
	for _, c := range f.Criteria {
		if c.ID == "" && c.Name == "" {
			continue
		}
		field := fmt.Sprintf("criteria[%d]", len(rp.Criteria))
		cr := bideval.Criterion{ID: c.ID, Name: c.Name, Weight: number(field+".weight", c.Weight) / 100, MaxScore: number(field+".max_score", c.MaxScore),
			Query: c.Query, Rubric: llm.Rubric{Keywords: split(c.Keywords)}}
		if c.TopK != "" {
			cr.TopK = int(number(field+".top_k", c.TopK))
		}
		for j, line := range strings.Split(c.Numbers, "\n") {
			if strings.TrimSpace(line) == "" {
				continue
			}
			// label | pattern | min | max: the pattern may hold | itself (alternatives).
			parts := strings.Split(line, "|")
			nf := fmt.Sprintf("%s.rubric.numbers[%d]", field, j)
			if len(parts) < 4 {
				ps = append(ps, bideval.Problem{Field: nf, Msg: "write label | pattern | min | max"})
				continue
			}
			parts = []string{parts[0], strings.Join(parts[1:len(parts)-2], "|"), parts[len(parts)-2], parts[len(parts)-1]}
			bound := func(s string) *float64 {
				if s = strings.TrimSpace(s); s == "" {
					return nil
				}
				v := number(nf, s)
				return &v
			}
			cr.Rubric.Numbers = append(cr.Rubric.Numbers, llm.NumberRule{Label: strings.TrimSpace(parts[0]), Pattern: strings.TrimSpace(parts[1]),
				Min: bound(parts[2]), Max: bound(parts[3])})
		}
		rp.Criteria = append(rp.Criteria, cr)
	}
	t := f.Thresholds
	rp.Thresholds = bideval.Thresholds{MinConfidence: number("thresholds.min_confidence", t[0]), MinCitationCoverage: number("thresholds.min_citation_coverage", t[1]),
		HighScore: number("thresholds.high_score", t[2]), OutlierDelta: number("thresholds.outlier_delta", t[3]), MinPeers: int(number("thresholds.min_peers", t[4]))}
	return rp, ps
}

func (h *handler) rulePackPage(c echo.Context) error {
	vm, err := h.rulePackVM(c, nil)
	if err != nil {
		return err
	}
	if c.QueryParam("created") == "1" {
		vm.Notice = "Tender created. Give it a rule pack: import one as YAML or write it below, then add its suppliers on the tender's page."
	}
	if v := c.QueryParam("saved"); v != "" && v == vm.Current {
		vm.Notice = "Saved as version " + v + ", which the tender now uses. Evaluations already run keep theirs; the tender's page offers re-running them with " + v + "."
	}
	return mount.Render(c, http.StatusOK, bidweb.RulePack(h.Meta(c, "Rule pack", "dashboard"), vm))
}

// saveRulePack stores rp as a new version and goes to the page saying so; a refusal shows
// the page again with every problem and what was sent.
func (h *handler) saveRulePack(c echo.Context, rp bideval.RulePack, problems []bideval.Problem, source string, form *bidweb.RulePackFormVM, yamlText string) error {
	u := mount.User(c)
	ctx := c.Request().Context()
	if _, err := h.Store.Project(ctx, u.TenantID, c.Param("id")); err != nil {
		return err // another tenant's tender: 404 before anything else
	}
	var err error
	version := ""
	if len(problems) > 0 {
		var re *bideval.RulePackError
		if errors.As(bideval.ValidateRulePack(rp), &re) && source == "form" { // every problem at once
			problems = append(problems, re.Problems...)
		}
		err = &bideval.RulePackError{Problems: problems}
	} else {
		version, err = h.Store.SaveRulePack(ctx, u.TenantID, c.Param("id"), u.ID, rp, source)
	}
	if err == nil {
		return c.Redirect(http.StatusSeeOther, bideval.RulePackPath(c.Param("id"))+"?saved="+url.QueryEscape(version))
	}
	var re *bideval.RulePackError
	if !errors.As(err, &re) {
		status, _, msg := h.Explain(err)
		if status >= 500 {
			return err
		}
		re = &bideval.RulePackError{Problems: []bideval.Problem{{Msg: msg}}}
	}
	vm, verr := h.rulePackVM(c, form)
	if verr != nil {
		return verr
	}
	vm.YAML = yamlText
	vm.Error = "Nothing was saved: the rule pack is not valid."
	for _, p := range re.Problems {
		vm.Problems = append(vm.Problems, mount.Sentence(p.String()))
	}
	return mount.Render(c, http.StatusBadRequest, bidweb.RulePack(h.Meta(c, "Rule pack", "dashboard"), vm))
}

func (h *handler) rulePackSave(c echo.Context) error {
	q, err := c.FormParams()
	if err != nil {
		return err
	}
	f := formValues(q)
	rp, problems := packOf(f)
	return h.saveRulePack(c, rp, problems, "form", &f, "")
}

// maxYAMLUpload bounds an imported rule pack file.
const maxYAMLUpload = 256 << 10

func (h *handler) rulePackImport(c echo.Context) error {
	text := c.FormValue("yaml")
	if fh, err := c.FormFile("file"); err == nil && fh.Size > 0 {
		f, err := fh.Open()
		if err != nil {
			return err
		}
		defer f.Close()
		b, err := io.ReadAll(io.LimitReader(f, maxYAMLUpload+1))
		if err != nil {
			return err
		}
		text = string(b)
	}
	rp, err := bideval.ParseRulePackYAML([]byte(text))
	var problems []bideval.Problem
	if re := (*bideval.RulePackError)(nil); errors.As(err, &re) {
		problems = re.Problems
	} else if err != nil {
		return err
	}
	if len(text) > 64<<10 {
		text = "" // not echoed back when large
	}
	return h.saveRulePack(c, rp, problems, "yaml", nil, text)
}

func (h *handler) rulePackExport(c echo.Context) error {
	rp, ok, err := h.Store.CurrentRulePack(c.Request().Context(), mount.User(c).TenantID, c.Param("id"))
	if err != nil {
		return err
	}
	if !ok {
		return fault.New(fault.Business, bideval.CodeRulePackInvalid, "this tender has no rule pack yet")
	}
	b, err := bideval.RulePackYAML(rp)
	if err != nil {
		return err
	}
	c.Response().Header().Set(echo.HeaderContentDisposition, fmt.Sprintf(`attachment; filename="%s-%s.yaml"`, c.Param("id"), rp.Version))
	return c.Blob(http.StatusOK, "application/yaml; charset=utf-8", append([]byte("# rule pack "+rp.Version+" of tender "+c.Param("id")+"\n"), b...))
}

// suppliersKey carries a refused supplier change's message to the suppliers card.
const suppliersKey = "bideval.suppliers_error"

func (h *handler) suppliersVM(c echo.Context, projectID string) (bidweb.SuppliersVM, error) {
	sups, err := h.Store.Suppliers(c.Request().Context(), mount.User(c).TenantID, projectID)
	if err != nil {
		return bidweb.SuppliersVM{}, err
	}
	vm := bidweb.SuppliersVM{ProjectID: projectID, CSRF: mount.CSRFToken(c)}
	for _, s := range sups {
		vm.Suppliers = append(vm.Suppliers, bidweb.SupplierVM{ID: s.ID, Name: s.Name})
	}
	vm.Error, _ = c.Get(suppliersKey).(string)
	switch c.QueryParam("supplier") {
	case "added":
		vm.Notice = "Supplier added. Upload their bid documents below, then start the evaluation."
	case "renamed":
		vm.Notice = "Supplier renamed."
	}
	return vm, nil
}

// supplierChanged answers a supplier change: back to the tender's page, or the page with the refusal.
func (h *handler) supplierChanged(c echo.Context, err error, done string) error {
	if err == nil {
		return c.Redirect(http.StatusSeeOther, bideval.ProjectPath(c.Param("id"))+"?supplier="+done+"#suppliers")
	}
	status, _, msg := h.Explain(err)
	if status >= 500 || status == http.StatusNotFound {
		return err
	}
	c.Set(suppliersKey, msg)
	return h.renderProjectWith(c, status, nil, "", bidweb.ProjectUploadVM{})
}

func (h *handler) supplierAdd(c echo.Context) error {
	u := mount.User(c)
	_, err := h.Store.AddTenderSupplier(c.Request().Context(), u.TenantID, c.Param("id"), u.ID, c.FormValue("name"))
	return h.supplierChanged(c, err, "added")
}

func (h *handler) supplierRename(c echo.Context) error {
	u := mount.User(c)
	err := h.Store.RenameSupplier(c.Request().Context(), u.TenantID, c.Param("id"), c.Param("sid"), u.ID, c.FormValue("name"))
	return h.supplierChanged(c, err, "renamed")
}
