package bidevalhttp

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"weft/internal/auth"
	"weft/internal/fault"
	"weft/internal/graph"
	"weft/internal/server/mount"
	"weft/internal/workflow/bideval"
	"weft/internal/workflow/bideval/bidevalpg"
)

// The tender setup API, /api/v1/tenders: what the setup pages do, for programs. PM and admin
// tokens write; reviewer tokens read. Rule packs are sent in the YAML schema (JSON is YAML
// too); bid documents as multipart (title, file).
func (h *handler) routesSetupAPI(api *echo.Group) {
	write := h.RequireRole(auth.PM, auth.Admin)
	api.GET("/tenders", h.apiTenders)
	api.POST("/tenders", h.apiTenderCreate, write)
	api.GET("/tenders/:id", h.apiTender)
	api.GET("/tenders/:id/rule-packs", h.apiRulePacks)
	api.POST("/tenders/:id/rule-packs", h.apiRulePackCreate, write)
	api.GET("/tenders/:id/suppliers", h.apiSuppliers)
	api.POST("/tenders/:id/suppliers", h.apiSupplierAdd, write)
	api.POST("/tenders/:id/suppliers/:sid/rename", h.apiSupplierRename, write)
	api.POST("/tenders/:id/suppliers/:sid/documents", h.apiDocumentUpload, write)
}

type apiTender struct {
	ID          string     `json:"id"`
	Name        string     `json:"name"`
	Reference   string     `json:"reference"`
	Description string     `json:"description"`
	Budget      float64    `json:"budget"`
	Currency    string     `json:"currency"`
	Deadline    *time.Time `json:"deadline"`
	RulePack    string     `json:"rule_pack_version,omitempty"` // the version in use (not in lists)
	CreatedAt   time.Time  `json:"created_at"`
}

func apiTenderOf(t bideval.Tender, version string) apiTender {
	return apiTender{ID: t.ID, Name: t.Name, Reference: t.Reference, Description: t.Description, Budget: t.Budget, Currency: t.Currency,
		Deadline: t.Deadline, RulePack: version, CreatedAt: t.CreatedAt}
}

// apiJSON decodes a small JSON body strictly.
func apiJSON(c echo.Context, v any) error {
	dec := json.NewDecoder(io.LimitReader(c.Request().Body, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fault.New(fault.Validation, fault.CodeValidation, "the request body is not valid JSON for this call: "+err.Error())
	}
	return nil
}

func (h *handler) apiTenders(c echo.Context) error {
	ts, err := h.Store.Tenders(c.Request().Context(), mount.User(c).TenantID)
	if err != nil {
		return err
	}
	out := make([]apiTender, 0, len(ts))
	for _, t := range ts {
		out = append(out, apiTenderOf(t, ""))
	}
	return h.JSON(c, http.StatusOK, map[string]any{"tenders": out})
}

func (h *handler) apiTender(c echo.Context) error {
	ctx, tenant := c.Request().Context(), mount.User(c).TenantID
	p, err := h.Store.Project(ctx, tenant, c.Param("id"))
	if err != nil {
		return err
	}
	sups, err := h.Store.Suppliers(ctx, tenant, p.ID)
	if err != nil {
		return err
	}
	return h.JSON(c, http.StatusOK, map[string]any{"tender": apiTenderOf(p.Tender, p.RulePackVersion), "suppliers": apiSuppliersOf(sups)})
}

func (h *handler) apiTenderCreate(c echo.Context) error {
	var req struct {
		Name        string  `json:"name"`
		Reference   string  `json:"reference"`
		Description string  `json:"description"`
		Budget      float64 `json:"budget"`
		Currency    string  `json:"currency"`
		Deadline    string  `json:"deadline"`
	}
	if err := apiJSON(c, &req); err != nil {
		return err
	}
	deadline, err := parseDeadline(req.Deadline)
	if err != nil {
		return err
	}
	u := mount.User(c)
	ctx := c.Request().Context()
	id, err := h.Store.CreateTender(ctx, u.TenantID, u.ID, bidevalpg.NewTender{Name: req.Name, Reference: req.Reference,
		Description: req.Description, Budget: req.Budget, Currency: req.Currency, Deadline: deadline})
	if err != nil {
		return err
	}
	p, err := h.Store.Project(ctx, u.TenantID, id)
	if err != nil {
		return err
	}
	return h.JSON(c, http.StatusCreated, map[string]any{"tender": apiTenderOf(p.Tender, "")})
}

func (h *handler) apiRulePacks(c echo.Context) error {
	vs, err := h.Store.RulePacks(c.Request().Context(), mount.User(c).TenantID, c.Param("id"))
	if err != nil {
		return err
	}
	type version struct {
		Version   string           `json:"version"`
		InUse     bool             `json:"in_use"`
		CreatedBy string           `json:"created_by"`
		CreatedAt time.Time        `json:"created_at"`
		Pack      bideval.RulePack `json:"rule_pack"`
	}
	out := make([]version, 0, len(vs))
	for _, v := range vs {
		out = append(out, version{Version: v.Version, InUse: v.Pinned, CreatedBy: v.CreatedBy, CreatedAt: v.CreatedAt, Pack: v.Pack})
	}
	return h.JSON(c, http.StatusOK, map[string]any{"rule_packs": out})
}

// apiRulePackCreate takes a rule pack in the YAML schema (or the same as JSON) and stores it
// as the tender's next version; a refusal lists every problem with its field (and line).
func (h *handler) apiRulePackCreate(c echo.Context) error {
	u := mount.User(c)
	ctx := c.Request().Context()
	if _, err := h.Store.Project(ctx, u.TenantID, c.Param("id")); err != nil {
		return err
	}
	b, err := io.ReadAll(io.LimitReader(c.Request().Body, maxYAMLUpload+1))
	if err != nil {
		return err
	}
	rp, err := bideval.ParseRulePackYAML(b)
	version := ""
	if err == nil {
		version, err = h.Store.SaveRulePack(ctx, u.TenantID, c.Param("id"), u.ID, rp, "api")
	}
	var re *bideval.RulePackError
	if errors.As(err, &re) {
		return h.JSON(c, http.StatusBadRequest, map[string]any{"error": map[string]any{"code": bideval.CodeRulePackInvalid,
			"message": re.Error(), "problems": re.Problems}})
	}
	if err != nil {
		return err
	}
	return h.JSON(c, http.StatusCreated, map[string]any{"version": version, "in_use": true})
}

type apiSupplier struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	EvaluationID string `json:"evaluation_id"`
}

func apiSuppliersOf(sups []bidevalpg.Supplier) []apiSupplier {
	out := make([]apiSupplier, 0, len(sups))
	for _, s := range sups {
		out = append(out, apiSupplier{ID: s.ID, Name: s.Name, EvaluationID: s.EvaluationID})
	}
	return out
}

func (h *handler) apiSuppliers(c echo.Context) error {
	ctx, tenant := c.Request().Context(), mount.User(c).TenantID
	if _, err := h.Store.Project(ctx, tenant, c.Param("id")); err != nil {
		return err
	}
	sups, err := h.Store.Suppliers(ctx, tenant, c.Param("id"))
	if err != nil {
		return err
	}
	return h.JSON(c, http.StatusOK, map[string]any{"suppliers": apiSuppliersOf(sups)})
}

func (h *handler) apiSupplierAdd(c echo.Context) error {
	var req struct {
		Name string `json:"name"`
	}
	if err := apiJSON(c, &req); err != nil {
		return err
	}
	u := mount.User(c)
	s, err := h.Store.AddTenderSupplier(c.Request().Context(), u.TenantID, c.Param("id"), u.ID, req.Name)
	if err != nil {
		return err
	}
	return h.JSON(c, http.StatusCreated, map[string]any{"supplier": apiSupplier{ID: s.ID, Name: s.Name, EvaluationID: s.EvaluationID}})
}

func (h *handler) apiSupplierRename(c echo.Context) error {
	var req struct {
		Name string `json:"name"`
	}
	if err := apiJSON(c, &req); err != nil {
		return err
	}
	u := mount.User(c)
	if err := h.Store.RenameSupplier(c.Request().Context(), u.TenantID, c.Param("id"), c.Param("sid"), u.ID, req.Name); err != nil {
		return err
	}
	return h.JSON(c, http.StatusOK, map[string]any{"supplier": apiSupplier{ID: c.Param("sid"), Name: strings.TrimSpace(req.Name)}})
}

// apiUploadLimit bounds a document upload's body: the file's limit and 1 MB for the rest.
const apiUploadLimit = maxUpload + 1<<20

// apiDocumentUpload adds a bid document (multipart: title, file) to a supplier of the tender.
func (h *handler) apiDocumentUpload(c echo.Context) error {
	u := mount.User(c)
	ctx := c.Request().Context()
	sups, err := h.Store.Suppliers(ctx, u.TenantID, c.Param("id"))
	if err != nil {
		return err
	}
	var ev bidevalpg.Evaluation
	for _, s := range sups {
		if s.ID == c.Param("sid") {
			if ev, err = h.Store.Evaluation(ctx, u.TenantID, s.EvaluationID); err != nil {
				return err
			}
		}
	}
	if ev.ID == "" {
		return fmt.Errorf("supplier %s of tender %s: %w", c.Param("sid"), c.Param("id"), graph.ErrNotFound)
	}
	r := c.Request()
	if r.ContentLength > apiUploadLimit {
		return h.JSON(c, http.StatusRequestEntityTooLarge, map[string]any{"error": map[string]string{"code": "BODY_TOO_LARGE",
			"message": fmt.Sprintf("the upload is larger than %d MB: a bid document may be at most %d MB", apiUploadLimit>>20, maxUpload>>20)}})
	}
	r.Body = http.MaxBytesReader(c.Response(), r.Body, apiUploadLimit)
	title := strings.TrimSpace(c.FormValue("title"))
	fh, err := c.FormFile("file")
	if tooBig := (*http.MaxBytesError)(nil); errors.As(err, &tooBig) {
		return h.JSON(c, http.StatusRequestEntityTooLarge, map[string]any{"error": map[string]string{"code": "BODY_TOO_LARGE",
			"message": fmt.Sprintf("a bid document may be at most %d MB", maxUpload>>20)}})
	}
	if err != nil {
		return fault.New(fault.Validation, fault.CodeValidation, "send the document as multipart/form-data with a file field named file and a title")
	}
	if title == "" {
		title = fh.Filename
	}
	if err := checkTitle(title); err != nil {
		return err
	}
	body, media, msg, err := h.readUpload(ctx, fh)
	if err != nil {
		return err
	}
	if msg != "" {
		return fault.New(fault.Validation, fault.CodeValidation, msg)
	}
	docID, n, err := h.storeBidDocument(ctx, u.TenantID, u.ID, ev, title, media, body)
	if dup := (*bidevalpg.DuplicateDocument)(nil); errors.As(err, &dup) {
		return fault.New(fault.Business, bideval.CodeDocumentDuplicate, dup.Error())
	}
	if err != nil {
		return err
	}
	return h.JSON(c, http.StatusCreated, map[string]any{"document_id": docID, "chunks": n, "media_type": media})
}

func checkTitle(title string) error {
	if len([]rune(title)) > 200 {
		return fault.New(fault.Validation, fault.CodeValidation, "the title is longer than 200 characters")
	}
	return nil
}
