package dataagent

import (
	"errors"
	"strings"
	"testing"
	"time"

	"weft/internal/workflow/dataagent/nlsql"
)

// shop is a small catalog for the pure checks.
var shop = nlsql.Catalog{Schema: "analytics", Tables: []nlsql.Table{
	{Name: "regions", PrimaryKey: []string{"region_id"}, Columns: []nlsql.Column{{Name: "region_id", Type: "integer"},
		{Name: "name", Type: "text", Values: []string{"Jiangsu", "Shanghai", "Zhejiang"}}}},
	{Name: "customers", PrimaryKey: []string{"customer_id"}, ForeignKeys: []nlsql.ForeignKey{{Columns: []string{"region_id"}, RefTable: "regions", RefColumns: []string{"region_id"}}},
		Columns: []nlsql.Column{{Name: "customer_id", Type: "integer"}, {Name: "region_id", Type: "integer"}}},
	{Name: "orders", Comment: "Orders (订单)", PrimaryKey: []string{"order_id"}, ForeignKeys: []nlsql.ForeignKey{{Columns: []string{"customer_id"}, RefTable: "customers", RefColumns: []string{"customer_id"}}},
		Columns: []nlsql.Column{{Name: "order_id", Type: "integer"}, {Name: "customer_id", Type: "integer"}, {Name: "ordered_at", Type: "timestamp without time zone"},
			{Name: "status", Type: "text", Values: []string{"paid", "refunded"}}, {Name: "amount", Type: "numeric"}}},
}}

var notes = []nlsql.Note{{ID: "gmv", Text: "GMV means the sum of paid orders' amounts."}, {ID: "east", Text: "East China = Shanghai, Jiangsu, Zhejiang."}}

func specOf(t *testing.T, q string) nlsql.Spec {
	t.Helper()
	u := nlsql.Understand(nlsql.Question{Parts: []string{q}, Catalog: shop, Notes: notes, Now: time.Date(2026, 1, 15, 0, 0, 0, 0, time.UTC)})
	if !u.Feasible {
		t.Fatalf("%s: %v", q, u.Problems)
	}
	return u.Spec
}

func TestConsistency(t *testing.T) {
	t.Parallel()
	gmv := specOf(t, "What was the GMV in East China last month?")
	byRegion := specOf(t, "GMV by region last month")
	cases := []struct {
		name   string
		spec   nlsql.Spec
		sql    string
		reason string // "" passes
	}{
		{"the offline SQL", gmv, `SELECT SUM(orders.amount) AS gmv FROM orders JOIN customers ON customers.customer_id = orders.customer_id
			JOIN regions ON regions.region_id = customers.region_id WHERE orders.status = 'paid' AND regions.name IN ('Shanghai', 'Jiangsu', 'Zhejiang')
			AND orders.ordered_at >= '2025-12-01' AND orders.ordered_at < '2026-01-01'`, ""},
		{"other spellings of the same", gmv, `SELECT sum(o.amount) FROM analytics.orders o JOIN customers c USING (customer_id) JOIN regions r ON r.region_id = c.region_id
			WHERE o.status = 'paid' AND r.name IN ('Zhejiang', 'Shanghai', 'Jiangsu') AND o.ordered_at BETWEEN DATE '2025-12-01' AND DATE '2025-12-31'`, ""},
		{"a GMV without the paid filter", gmv, `SELECT SUM(amount) FROM orders JOIN customers USING (customer_id) JOIN regions USING (region_id)
			WHERE regions.name IN ('Shanghai', 'Jiangsu', 'Zhejiang') AND ordered_at >= '2025-12-01' AND ordered_at < '2026-01-01'`, "orders.status = 'paid' (business note gmv)"},
		{"East China short of a region", gmv, `SELECT SUM(o.amount) FROM orders o JOIN customers c USING (customer_id) JOIN regions r USING (region_id)
			WHERE o.status = 'paid' AND r.name IN ('Shanghai', 'Jiangsu') AND o.ordered_at >= '2025-12-01' AND o.ordered_at < '2026-01-01'`, "regions.name IN ('Shanghai', 'Jiangsu', 'Zhejiang')"},
		{"the wrong month", gmv, `SELECT SUM(o.amount) FROM orders o JOIN customers c USING (customer_id) JOIN regions r USING (region_id)
			WHERE o.status = 'paid' AND r.name IN ('Shanghai', 'Jiangsu', 'Zhejiang') AND o.ordered_at >= '2025-11-01' AND o.ordered_at < '2025-12-01'`, "does not restrict orders.ordered_at"},
		{"an average for a sum", gmv, `SELECT AVG(o.amount) FROM orders o JOIN customers c USING (customer_id) JOIN regions r USING (region_id)
			WHERE o.status = 'paid' AND r.name IN ('Shanghai', 'Jiangsu', 'Zhejiang') AND o.ordered_at >= '2025-12-01' AND o.ordered_at < '2026-01-01'`, "computes no SUM()"},
		{"an unknown column", gmv, `SELECT SUM(o.total) FROM orders o WHERE o.status = 'paid'`, "the table orders has no column total"},
		{"an unknown table", gmv, `SELECT SUM(amount) FROM invoices`, "the table invoices is not in the recalled schema"},
		{"another schema", gmv, `SELECT count(*) FROM public.users`, "outside the analysis schema analytics"},
		{"not grouped", byRegion, `SELECT SUM(orders.amount) FROM orders WHERE orders.status = 'paid' AND orders.ordered_at >= '2025-12-01' AND orders.ordered_at < '2026-01-01'`, "no GROUP BY"},
		{"two statements", gmv, `SELECT 1; SELECT 2`, "2 statements"},
		{"a write", gmv, `DELETE FROM orders`, "a DELETE statement"},
	}
	for _, c := range cases {
		reasons := checkConsistency(c.sql, c.spec, shop)
		switch {
		case c.reason == "" && len(reasons) > 0:
			t.Errorf("%s: refused: %q", c.name, reasons)
		case c.reason != "" && !strings.Contains(strings.Join(reasons, "\n"), c.reason):
			t.Errorf("%s: reasons %q, want one mentioning %q", c.name, reasons, c.reason)
		}
	}
}

func TestCheckSelect(t *testing.T) {
	t.Parallel()
	for sql, ok := range map[string]bool{
		"SELECT 1":                             true,
		"WITH x AS (SELECT 1) SELECT * FROM x": true,
		"SELECT 1 UNION SELECT 2":              true,
		"":                                     false,
		"SELECT 1; SELECT 2":                   false,
		"INSERT INTO t VALUES (1)":             false,
		"WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d":  false,
		"SELECT * INTO t2 FROM t":                                false,
		"SELECT * FROM t FOR UPDATE":                             false,
		"SET ROLE postgres":                                      false,
		"RESET ROLE":                                             false,
		"SELECT set_config('role', 'x', true)":                   false,
		"SELECT pg_catalog.set_config('role', 'x', true)":        false,
		"SELECT * FROM query_to_xml('select 1', true, true, '')": false,
		"COPY t TO PROGRAM 'id'":                                 false,
		"SELEC 1":                                                false,
	} {
		err := CheckSelect(sql)
		if (err == nil) != ok {
			t.Errorf("CheckSelect(%q) = %v, want ok %v", sql, err, ok)
		}
		if err != nil && !errors.Is(err, ErrRefused) {
			t.Errorf("CheckSelect(%q) = %v, not ErrRefused", sql, err)
		}
	}
}

func TestPlanValidate(t *testing.T) {
	t.Parallel()
	step := func(n int, tool string) PlanStep { return PlanStep{Step: n, Tool: tool, Instruction: "do " + tool} }
	cases := []struct {
		name   string
		plan   Plan
		python bool
		want   string
	}{
		{"sql then report", Plan{Steps: []PlanStep{step(1, "sql"), step(2, "report")}}, false, ""},
		{"sql, python, report", Plan{Steps: []PlanStep{step(1, "sql"), step(2, "python"), step(3, "report")}}, true, ""},
		{"python unavailable", Plan{Steps: []PlanStep{step(1, "sql"), step(2, "python"), step(3, "report")}}, false, "cannot run"},
		{"no steps", Plan{}, false, "2 to 8 steps"},
		{"unknown tool", Plan{Steps: []PlanStep{step(1, "sql"), step(2, "shell"), step(3, "report")}}, true, `names the tool "shell"`},
		{"report not last", Plan{Steps: []PlanStep{step(1, "sql"), step(2, "report"), step(3, "sql")}}, false, "not the last step"},
		{"no report", Plan{Steps: []PlanStep{step(1, "sql"), step(2, "sql")}}, false, "exactly one report step"},
		{"python first", Plan{Steps: []PlanStep{step(1, "python"), step(2, "report")}}, true, "before any sql step"},
		{"misnumbered", Plan{Steps: []PlanStep{step(1, "sql"), step(3, "report")}}, false, "numbered 3"},
		{"empty instruction", Plan{Steps: []PlanStep{{Step: 1, Tool: "sql"}, step(2, "report")}}, false, "needs an instruction"},
		{"draft on a report", Plan{Steps: []PlanStep{step(1, "sql"), {Step: 2, Tool: "report", Instruction: "r", SQLDraft: "SELECT 1"}}}, false, "carries a SQL draft"},
	}
	for _, c := range cases {
		err := c.plan.Validate(c.python)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, ErrPlanInvalid)):
			t.Errorf("%s: err = %v, want one mentioning %q", c.name, err, c.want)
		}
	}
}

// The conversation reducer applies turn operations in order and keeps
// what earlier turns recorded.
func TestConversationReducer(t *testing.T) {
	t.Parallel()
	c := Conversation{}
	for _, w := range []any{beginTurn(1, "q1").Value, recordQuery(Query{Parts: []string{"q1"}, Standalone: "q1"}).Value,
		appendPlannerChunk("plan 1").Value, appendPlannerChunk("plan 2").Value, finishTurn(StatusAnswered, "done").Value, beginTurn(2, "and?").Value} {
		c = reduceConversation(c, w.(Conversation))
	}
	if len(c.Turns) != 2 || c.Op != nil {
		t.Fatalf("turns = %+v", c)
	}
	t1 := c.Turns[0]
	if !t1.Done || !t1.Analysis || len(t1.Planner) != 2 || t1.Summary != "done" || c.Turns[1].Done {
		t.Errorf("turn 1 = %+v, turn 2 = %+v", t1, c.Turns[1])
	}
	if prev, ok := c.previousQuery(); !ok || prev.Index != 1 {
		t.Errorf("previous query = %+v, %v", prev, ok)
	}
}

func TestCheckInput(t *testing.T) {
	t.Parallel()
	for in, ok := range map[string]bool{
		`{"input": "GMV by region", "schema": "analytics"}`:                          true,
		`{"input": "上个月的GMV", "schema": "sales_2025", "human_review_enabled": true}`: true,
		`{"input": "  ", "schema": "analytics"}`:                                     false,
		`{"input": "GMV", "schema": "public"}`:                                       false,
		`{"input": "GMV", "schema": "Analytics; DROP"}`:                              false,
		`{"input": "GMV", "schema": "pg_catalog"}`:                                   false,
		`{"input": "GMV", "schema": "analytics", "plan": {}}`:                        false,
		`[1]`: false,
	} {
		if err := CheckInput([]byte(in)); (err == nil) != ok {
			t.Errorf("CheckInput(%s) = %v, want ok %v", in, err, ok)
		}
	}
	if err := CheckInput(ExampleInput); err != nil {
		t.Errorf("the example input is refused: %v", err)
	}
}
