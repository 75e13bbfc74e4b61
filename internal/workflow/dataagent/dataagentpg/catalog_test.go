package dataagentpg_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"weft/internal/workflow/dataagent/dataagentpg"
	"weft/internal/workflow/dataagent/nlsql"
)

func TestCatalogOfTheDemo(t *testing.T) {
	t.Parallel()
	pool := demoDB(t, "analytics")
	cat, err := dataagentpg.NewCatalog(pool).ReadCatalog(context.Background(), "analytics")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tb := range cat.Tables {
		names = append(names, tb.Name)
	}
	if want := []string{"customers", "order_items", "orders", "products", "regions"}; !slices.Equal(names, want) {
		t.Fatalf("tables = %v, want %v (and none of the application's)", names, want)
	}
	orders, _ := cat.Table("orders")
	status, _ := orders.Column("status")
	if !slices.Equal(status.Values, []string{"cancelled", "paid", "refunded"}) || status.Comment == "" {
		t.Errorf("orders.status = %+v, want its three values and its comment", status)
	}
	if at, _ := orders.Column("ordered_at"); nlsql.Kind(at.Type) != nlsql.KindTime {
		t.Errorf("orders.ordered_at type %q", at.Type)
	}
	if !slices.Equal(orders.PrimaryKey, []string{"order_id"}) || len(orders.ForeignKeys) != 1 || orders.ForeignKeys[0].RefTable != "customers" {
		t.Errorf("orders keys: pk %v fks %+v", orders.PrimaryKey, orders.ForeignKeys)
	}
	items, _ := cat.Table("order_items")
	if len(items.ForeignKeys) != 2 {
		t.Errorf("order_items foreign keys = %+v, want two", items.ForeignKeys)
	}
	customers, _ := cat.Table("customers")
	if name, _ := customers.Column("name"); len(name.Values) != 0 {
		t.Errorf("customers.name lists %d values; a column of 5,000 names lists none", len(name.Values))
	}
	if orders.Rows < 40000 {
		t.Errorf("orders row estimate %d", orders.Rows)
	}
}

// The catalog reader and the offline model know no table in advance: a
// schema of the tenant's own, with other names, comments and keys, is read
// and queried the same way.
func TestCatalogOfAnotherSchema(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := demoDB(t, "analytics")
	_, err := pool.Exec(ctx, `
CREATE SCHEMA clinic;
CREATE TABLE clinic.doctors (doctor_id int PRIMARY KEY, full_name text NOT NULL, speciality text NOT NULL);
COMMENT ON TABLE clinic.doctors IS 'Doctors of the clinic (医生, physician)';
COMMENT ON COLUMN clinic.doctors.speciality IS 'Medical speciality (科室): cardiology (心内科), dermatology (皮肤科)';
CREATE TABLE clinic.visits (visit_id int PRIMARY KEY, doctor_id int NOT NULL REFERENCES clinic.doctors, visited_on date NOT NULL, fee numeric(8,2) NOT NULL);
COMMENT ON TABLE clinic.visits IS 'Patient visits (就诊, appointment)';
COMMENT ON COLUMN clinic.visits.fee IS 'Fee charged (费用, 收费)';
INSERT INTO clinic.doctors VALUES (1, 'Dr. Wang', 'cardiology'), (2, 'Dr. Li', 'dermatology'), (3, 'Dr. Zhao', 'cardiology');
INSERT INTO clinic.visits SELECT g, 1 + g % 3, DATE '2025-01-01' + (g % 365), 100 + g % 7 FROM generate_series(1, 900) AS g;`)
	if err != nil {
		t.Fatal(err)
	}
	if err := dataagentpg.Prepare(ctx, pool, "clinic"); err != nil {
		t.Fatal(err)
	}
	cat, err := dataagentpg.NewCatalog(pool).ReadCatalog(ctx, "clinic")
	if err != nil {
		t.Fatal(err)
	}
	if len(cat.Tables) != 2 {
		t.Fatalf("clinic tables = %+v", cat.Tables)
	}
	now := time.Date(2026, 2, 10, 0, 0, 0, 0, time.UTC)
	ex := dataagentpg.NewExecutor(pool)
	for _, c := range []struct{ q, check string }{
		{"What were the total fees by speciality last year?", `SELECT d.speciality, sum(v.fee) FROM clinic.visits v JOIN clinic.doctors d USING (doctor_id)
			WHERE v.visited_on >= '2025-01-01' AND v.visited_on < '2026-01-01' GROUP BY 1 ORDER BY 2 DESC, 1`},
		{"去年心内科的就诊数量", `SELECT count(*) FROM clinic.visits v JOIN clinic.doctors d USING (doctor_id)
			WHERE d.speciality = 'cardiology' AND v.visited_on >= '2025-01-01' AND v.visited_on < '2026-01-01'`},
	} {
		u := nlsql.Understand(nlsql.Question{Parts: []string{c.q}, Catalog: cat, Now: now})
		if !u.Feasible {
			t.Fatalf("%s: not feasible: %v", c.q, u.Problems)
		}
		got, err := ex.Query(ctx, "clinic", u.SQL)
		if err != nil {
			t.Fatalf("%s: %v\n%s", c.q, err, u.SQL)
		}
		want := queryRows(t, pool, c.check)
		if !sameRows(got.Rows, want) {
			t.Errorf("%s:\n%s\ngot %v, want %v", c.q, u.SQL, got.Rows, want)
		}
	}
}

func TestNotesSearch(t *testing.T) {
	t.Parallel()
	pool := demoDB(t, "analytics")
	notes := dataagentpg.NewNotes(pool)
	for q, want := range map[string]string{
		"What was the GMV last month?":         "gmv",
		"上个月华东地区的平均订单金额是多少？":                   "east-china",
		"How many active customers are there?": "active-customer",
		"去年销量最高的5个商品":                          "units-sold",
		"去年的退款率是多少？":                           "refund-rate",
	} {
		got, err := notes.SearchNotes(context.Background(), "analytics", q, 3)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == 0 || got[0].ID != want {
			t.Errorf("%s: notes %+v, want %s first", q, got, want)
		}
	}
	if got, _ := notes.SearchNotes(context.Background(), "other_schema", "GMV", 3); len(got) != 0 {
		t.Errorf("another schema's search found %+v", got)
	}
}
