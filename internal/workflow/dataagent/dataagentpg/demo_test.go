package dataagentpg_test

import (
	"context"
	"testing"

	"weft/internal/workflow/dataagent/dataagentpg"
)

func TestDemoDataSet(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := demoDB(t, "analytics")
	var orders, items, customers, mismatched int
	var first, last string
	err := pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM analytics.orders), (SELECT count(*) FROM analytics.order_items),
		(SELECT count(*) FROM analytics.customers), min(ordered_at)::date::text, max(ordered_at)::date::text,
		(SELECT count(*) FROM analytics.orders o WHERE amount <> (SELECT sum(amount) FROM analytics.order_items i WHERE i.order_id = o.order_id))
		FROM analytics.orders`).Scan(&orders, &items, &customers, &first, &last, &mismatched)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("orders %d, items %d, customers %d, %s – %s", orders, items, customers, first, last)
	if orders < 45000 || orders > 55000 {
		t.Errorf("orders = %d, want about 50,000", orders)
	}
	if first != "2024-01-01" || last != "2025-12-31" {
		t.Errorf("orders span %s – %s, want the two years before %s", first, last, demoEnd.Format("2006-01-02"))
	}
	if mismatched != 0 {
		t.Errorf("%d orders' amounts differ from the sum of their items", mismatched)
	}
	// Seasonality: November (Singles' Day) outsells February (Spring Festival).
	var nov, feb int
	if err := pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE extract(month FROM ordered_at) = 11),
		count(*) FILTER (WHERE extract(month FROM ordered_at) = 2) FROM analytics.orders`).Scan(&nov, &feb); err != nil {
		t.Fatal(err)
	}
	if float64(nov) < 1.5*float64(feb) {
		t.Errorf("November has %d orders, February %d: want a seasonal peak", nov, feb)
	}
	// Deterministic: installing again with the same settings is a no-op, and
	// a second database gets the very same rows.
	if err := dataagentpg.InstallDemo(ctx, pool, dataagentpg.Demo{Schema: "analytics", End: demoEnd}); err != nil {
		t.Fatalf("reinstall: %v", err)
	}
	other := demoDB(t, "analytics")
	var a, b string
	q := `SELECT md5(string_agg(order_id || ':' || customer_id || ':' || ordered_at || ':' || status || ':' || amount, ',' ORDER BY order_id)) FROM analytics.orders`
	if err := pool.QueryRow(ctx, q).Scan(&a); err != nil {
		t.Fatal(err)
	}
	if err := other.QueryRow(ctx, q).Scan(&b); err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Errorf("two installs differ: %s vs %s", a, b)
	}
}
