package bidevalpg

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	bdb "weft/db/bideval"
	"weft/internal/fault"
	"weft/internal/graph"
	"weft/internal/postgres"
	"weft/internal/usertext"
	"weft/internal/workflow/bideval"
)

// Tender setup: a project manager creates a tender, writes its rule pack (each save a new
// version the tender pins), adds and renames suppliers. Each change and its audit row
// commit together.

// NewTender is what creating a tender takes.
type NewTender struct {
	Name, Reference, Description, Currency string
	Budget                                 float64
	Deadline                               *time.Time
}

// currencyRE is an ISO 4217-style code.
var currencyRE = regexp.MustCompile(`^[A-Z]{3}$`)

func invalid(msg string) error { return fault.New(fault.Validation, fault.CodeValidation, msg) }

// checkText refuses empty (when required), over-long or unstorable text.
func checkText(field, v string, required bool, max int) error {
	switch {
	case required && v == "":
		return invalid(field + " is required")
	case utf8.RuneCountInString(v) > max:
		return invalid(fmt.Sprintf("%s is longer than %d characters", field, max))
	}
	if err := usertext.Check(field, v); err != nil {
		return fault.Wrap(fault.Validation, fault.CodeValidation, err)
	}
	return nil
}

// Validate checks a new tender's fields.
func (t NewTender) Validate() error {
	if err := checkText("the name", t.Name, true, 200); err != nil {
		return err
	}
	if err := checkText("the reference", t.Reference, true, 64); err != nil {
		return err
	}
	if err := checkText("the description", t.Description, false, 4000); err != nil {
		return err
	}
	if !currencyRE.MatchString(t.Currency) {
		return invalid(fmt.Sprintf("the currency %q must be a three-letter code such as EUR, USD or CNY", t.Currency))
	}
	if t.Budget <= 0 || math.IsInf(t.Budget, 0) || math.IsNaN(t.Budget) || t.Budget > 1e15 {
		return invalid("the budget must be a positive amount")
	}
	return nil
}

// newID is a readable id: prefix, the words of s (lower case, hyphens) and 6 random hex digits.
func newID(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
		if b.Len() >= 32 {
			break
		}
	}
	rnd := make([]byte, 3)
	_, _ = rand.Read(rnd)
	return strings.Trim(b.String(), "-") + "-" + hex.EncodeToString(rnd)
}

func (e *Store) auditTender(ctx context.Context, tenantID, actor, action, projectID string, payload map[string]any) error {
	raw, err := json.Marshal(payload)
	if err != nil {
		return err
	}
	_, err = e.audit.Append(ctx, postgres.Entry{TenantID: tenantID, Actor: actor, Action: action, Subject: projectID,
		Workflow: bideval.Name, Payload: raw})
	return err
}

// CreateTender creates a tender (without a rule pack yet) and returns its id. A reference
// the tenant uses already (in any case) is refused with bideval.CodeReferenceTaken.
func (e *Store) CreateTender(ctx context.Context, tenantID, actor string, t NewTender) (string, error) {
	t.Name, t.Reference, t.Description = strings.TrimSpace(t.Name), strings.TrimSpace(t.Reference), strings.TrimSpace(t.Description)
	t.Currency = strings.ToUpper(strings.TrimSpace(t.Currency))
	if err := t.Validate(); err != nil {
		return "", err
	}
	id := newID(t.Reference)
	err := e.inTx(ctx, func(ctx context.Context, q *bdb.Queries) error {
		if other, err := q.TenderByReference(ctx, bdb.TenderByReferenceParams{TenantID: tenantID, Reference: t.Reference}); err == nil {
			return referenceTaken(t.Reference, other)
		} else if !errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("create tender: %w", translate(err))
		}
		err := q.TenderCreate(ctx, bdb.TenderCreateParams{ID: id, TenantID: tenantID, Name: t.Name, Reference: t.Reference,
			Description: t.Description, Budget: t.Budget, Currency: t.Currency, Deadline: t.Deadline})
		if errors.Is(translate(err), graph.ErrConflict) { // another request took the reference a moment ago
			return referenceTaken(t.Reference, "")
		}
		if err != nil {
			return fmt.Errorf("create tender: %w", translate(err))
		}
		return e.auditTender(ctx, tenantID, actor, bideval.ActionTenderCreate, id, map[string]any{"name": t.Name, "reference": t.Reference,
			"budget": t.Budget, "currency": t.Currency})
	})
	return id, err
}

func referenceTaken(ref, other string) error {
	msg := fmt.Sprintf("the reference %q is used by another tender of your organisation already: choose another", ref)
	if other != "" {
		msg = fmt.Sprintf("the reference %q is used by tender %s already: choose another", ref, other)
	}
	return fault.New(fault.Business, bideval.CodeReferenceTaken, msg)
}

// RulePackVersion is one version of a tender's rule pack.
type RulePackVersion struct {
	Version, CreatedBy string
	CreatedAt          time.Time
	Pinned             bool
	Pack               bideval.RulePack
}

// packRow is the rule pack a tender uses: the version it pins, else its newest.
func packRow(ctx context.Context, q *bdb.Queries, p bdb.Project) (bdb.RulePack, error) {
	if p.RulePackVersion != "" {
		return q.RulePackGet(ctx, bdb.RulePackGetParams{TenantID: p.TenantID, ProjectID: p.ID, Version: p.RulePackVersion})
	}
	return q.RulePackLatest(ctx, bdb.RulePackLatestParams{TenantID: p.TenantID, ProjectID: p.ID})
}

// RulePacks lists a tender's rule pack versions, newest first, marking the one it uses.
func (e *Store) RulePacks(ctx context.Context, tenantID, projectID string) ([]RulePackVersion, error) {
	q := e.q(ctx)
	p, err := q.ProjectGet(ctx, bdb.ProjectGetParams{TenantID: tenantID, ID: projectID})
	if err != nil {
		return nil, fmt.Errorf("project %s: %w", projectID, translate(err))
	}
	rows, err := q.RulePackList(ctx, bdb.RulePackListParams{TenantID: tenantID, ProjectID: projectID})
	if err != nil {
		return nil, fmt.Errorf("list rule packs: %w", translate(err))
	}
	out := make([]RulePackVersion, 0, len(rows))
	for i, r := range rows {
		v := RulePackVersion{Version: r.Version, CreatedBy: r.CreatedBy, CreatedAt: r.CreatedAt,
			Pinned: r.Version == p.RulePackVersion || (p.RulePackVersion == "" && i == 0)}
		if err := json.Unmarshal(r.Body, &v.Pack); err != nil {
			return nil, fmt.Errorf("rule pack %s: %w", r.Version, err)
		}
		v.Pack.Version = r.Version
		out = append(out, v)
	}
	return out, nil
}

// CurrentRulePack is the rule pack a tender uses (ok false when it has none yet).
func (e *Store) CurrentRulePack(ctx context.Context, tenantID, projectID string) (bideval.RulePack, bool, error) {
	q := e.q(ctx)
	p, err := q.ProjectGet(ctx, bdb.ProjectGetParams{TenantID: tenantID, ID: projectID})
	if err != nil {
		return bideval.RulePack{}, false, fmt.Errorf("project %s: %w", projectID, translate(err))
	}
	r, err := packRow(ctx, q, p)
	if errors.Is(err, pgx.ErrNoRows) {
		return bideval.RulePack{}, false, nil
	}
	if err != nil {
		return bideval.RulePack{}, false, fmt.Errorf("rule pack of %s: %w", projectID, translate(err))
	}
	var rp bideval.RulePack
	if err := json.Unmarshal(r.Body, &rp); err != nil {
		return bideval.RulePack{}, false, fmt.Errorf("rule pack %s: %w", r.Version, err)
	}
	rp.Version = r.Version
	return rp, true, nil
}

// SaveRulePack validates a rule pack and stores it as the tender's next version (v1, v2,
// …), which the tender then pins; evaluations already run keep the version they used. It
// returns the version. A pack the same as the one pinned is not stored again.
func (e *Store) SaveRulePack(ctx context.Context, tenantID, projectID, actor string, rp bideval.RulePack, source string) (string, error) {
	if err := bideval.ValidateRulePack(rp); err != nil {
		return "", err
	}
	var version string
	err := e.inTx(ctx, func(ctx context.Context, q *bdb.Queries) error {
		p, err := q.ProjectLock(ctx, bdb.ProjectLockParams{TenantID: tenantID, ID: projectID})
		if err != nil {
			return fmt.Errorf("project %s: %w", projectID, translate(err))
		}
		rows, err := q.RulePackList(ctx, bdb.RulePackListParams{TenantID: tenantID, ProjectID: projectID})
		if err != nil {
			return fmt.Errorf("list rule packs: %w", translate(err))
		}
		rp.Version = ""
		body, err := json.Marshal(rp)
		if err != nil {
			return err
		}
		if cur, err := packRow(ctx, q, p); err == nil && samePack(cur.Body, body) {
			version = cur.Version
			return nil
		}
		taken := map[string]bool{}
		for _, r := range rows {
			taken[r.Version] = true
		}
		for n := len(rows) + 1; ; n++ {
			if version = fmt.Sprintf("v%d", n); !taken[version] {
				break
			}
		}
		if err := q.RulePackCreate(ctx, bdb.RulePackCreateParams{ID: projectID + "@" + version, TenantID: tenantID, ProjectID: projectID,
			Version: version, Body: body, CreatedBy: actor}); err != nil {
			return fmt.Errorf("store rule pack: %w", translate(err))
		}
		if err := q.ProjectPinRulePack(ctx, bdb.ProjectPinRulePackParams{TenantID: tenantID, ID: projectID, Version: version}); err != nil {
			return fmt.Errorf("pin rule pack: %w", translate(err))
		}
		return e.auditTender(ctx, tenantID, actor, bideval.ActionRulePackVersion, projectID, map[string]any{"version": version,
			"source": source, "hard_rules": len(rp.HardRules), "criteria": len(rp.Criteria)})
	})
	return version, err
}

// samePack compares two stored packs by their JSON meaning.
func samePack(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}

// Supplier is a tender's supplier with its evaluation.
type Supplier struct {
	ID, Name, EvaluationID string
}

// checkSupplierName refuses an empty, over-long or taken name (another supplier of the tender, any case).
func checkSupplierName(ctx context.Context, q *bdb.Queries, tenantID, projectID, id, name string) error {
	if err := checkText("the supplier's name", name, true, 200); err != nil {
		return err
	}
	taken, err := q.SupplierNameTaken(ctx, bdb.SupplierNameTakenParams{TenantID: tenantID, ProjectID: projectID, Name: name, ID: id})
	if err != nil {
		return fmt.Errorf("check supplier name: %w", translate(err))
	}
	if taken {
		return fault.New(fault.Business, bideval.CodeSupplierTaken, fmt.Sprintf("the tender has a supplier named %q already", name))
	}
	return nil
}

// AddTenderSupplier adds a supplier (and its evaluation) to a tender of the tenant.
func (e *Store) AddTenderSupplier(ctx context.Context, tenantID, projectID, actor, name string) (Supplier, error) {
	name = strings.TrimSpace(name)
	var s Supplier
	err := e.inTx(ctx, func(ctx context.Context, q *bdb.Queries) error {
		if _, err := q.ProjectLock(ctx, bdb.ProjectLockParams{TenantID: tenantID, ID: projectID}); err != nil {
			return fmt.Errorf("project %s: %w", projectID, translate(err))
		}
		if err := checkSupplierName(ctx, q, tenantID, projectID, "", name); err != nil {
			return err
		}
		id := newID(name)
		evID, err := e.AddSupplier(ctx, tenantID, projectID, id, name)
		if err != nil {
			return err
		}
		s = Supplier{ID: id, Name: name, EvaluationID: evID}
		return e.auditTender(ctx, tenantID, actor, bideval.ActionSupplierAdd, projectID, map[string]any{"supplier_id": id, "name": name})
	})
	return s, err
}

// RenameSupplier renames a tender's supplier (graph.ErrNotFound for another tender's or tenant's).
func (e *Store) RenameSupplier(ctx context.Context, tenantID, projectID, supplierID, actor, name string) error {
	name = strings.TrimSpace(name)
	return e.inTx(ctx, func(ctx context.Context, q *bdb.Queries) error {
		old, err := q.SupplierGet(ctx, bdb.SupplierGetParams{TenantID: tenantID, ID: supplierID})
		if err != nil || old.ProjectID != projectID {
			return fmt.Errorf("supplier %s: %w", supplierID, graph.ErrNotFound)
		}
		if err := checkSupplierName(ctx, q, tenantID, projectID, supplierID, name); err != nil {
			return err
		}
		if _, err := q.SupplierRename(ctx, bdb.SupplierRenameParams{TenantID: tenantID, ProjectID: projectID, ID: supplierID, Name: name}); err != nil {
			return fmt.Errorf("rename supplier: %w", translate(err))
		}
		return e.auditTender(ctx, tenantID, actor, bideval.ActionSupplierRename, projectID, map[string]any{"supplier_id": supplierID,
			"from": old.Name, "to": name})
	})
}

// Suppliers lists a tender's suppliers with their evaluations.
func (e *Store) Suppliers(ctx context.Context, tenantID, projectID string) ([]Supplier, error) {
	evs, err := e.ProjectEvaluations(ctx, tenantID, projectID)
	if err != nil {
		return nil, err
	}
	out := make([]Supplier, 0, len(evs))
	for _, ev := range evs {
		out = append(out, Supplier{ID: ev.SupplierID, Name: ev.Supplier, EvaluationID: ev.ID})
	}
	return out, nil
}
