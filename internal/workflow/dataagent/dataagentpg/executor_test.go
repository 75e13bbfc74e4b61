package dataagentpg_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"weft/internal/workflow/dataagent"
	"weft/internal/workflow/dataagent/dataagentpg"
)

// Each hostile query is refused with a clear error, by the parser before it
// runs or by the database (the role's privileges, the read-only
// transaction, the timeout).
func TestExecutorRefusals(t *testing.T) {
	t.Parallel()
	pool := demoDB(t, "analytics")
	ex := dataagentpg.NewExecutor(pool)
	cases := []struct {
		name, sql, code, contains string
	}{
		{"DML", "INSERT INTO orders (order_id, customer_id, ordered_at, status, amount) VALUES (0, 1, now(), 'paid', 1)", "refused", "only SELECT is allowed"},
		{"DML update", "UPDATE orders SET amount = 0", "refused", "only SELECT is allowed"},
		{"DML in WITH", "WITH gone AS (DELETE FROM orders RETURNING *) SELECT count(*) FROM gone", "refused", "only SELECT is allowed"},
		{"DDL", "DROP TABLE orders", "refused", "only SELECT is allowed"},
		{"DDL create", "CREATE TABLE x (a int)", "refused", "only SELECT is allowed"},
		{"SELECT INTO", "SELECT * INTO copy_of_orders FROM orders", "refused", "SELECT … INTO"},
		{"two statements", "SELECT 1; SELECT 2", "refused", "2 statements"},
		{"two statements hiding DML", "SELECT 1; DELETE FROM orders", "refused", "2 statements"},
		{"COPY TO PROGRAM", "COPY orders TO PROGRAM 'cat > /tmp/weft-leak'", "refused", "only SELECT is allowed"},
		{"SET ROLE", "SET ROLE weft_test", "refused", "only SELECT is allowed"},
		{"set_config role", "SELECT set_config('role', 'weft_test', true)", "refused", "set_config is not allowed"},
		{"query_to_xml", "SELECT query_to_xml('select * from public.users', true, true, '')", "refused", "query_to_xml is not allowed"},
		{"row locks", "SELECT * FROM orders FOR UPDATE", "refused", "FOR UPDATE"},
		{"public.users", "SELECT * FROM public.users", "42501", "permission denied for table users"},
		{"pg_authid", "SELECT rolname, rolpassword FROM pg_authid", "42501", "permission denied for table pg_authid"},
		{"app table by search path", "SELECT * FROM jobs", "42P01", `relation "jobs" does not exist`},
		{"pg_sleep(60)", "SELECT pg_sleep(60)", "57014", "longer than the 5s limit"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			_, err := ex.Query(context.Background(), "analytics", c.sql)
			var qe *dataagent.QueryError
			if !errors.As(err, &qe) {
				t.Fatalf("err = %v, want a *dataagent.QueryError", err)
			}
			if qe.Code != c.code || !strings.Contains(qe.Message, c.contains) {
				t.Errorf("refusal = %s %q, want %s mentioning %q", qe.Code, qe.Message, c.code, c.contains)
			}
			if el := time.Since(start); c.code == "57014" && el > 15*time.Second {
				t.Errorf("the timeout took %s", el)
			}
		})
	}
	// Nothing was changed.
	var n int
	if err := pool.QueryRow(context.Background(), "SELECT count(*) FROM analytics.orders WHERE amount = 0 OR order_id = 0").Scan(&n); err != nil || n != 0 {
		t.Errorf("orders changed: %d rows, err %v", n, err)
	}
}

// Behind the parser, the database refuses the same things on its own: the
// transaction is READ ONLY and the role may read the analysis schema only.
// (A SET ROLE back to the session's own user is the one thing the database
// allows — a session user may always become itself again — which is why
// the parser refuses SET and set_config before anything runs.)
func TestDatabaseRefusesBehindTheParser(t *testing.T) {
	t.Parallel()
	pool := demoDB(t, "analytics")
	cases := []struct{ sql, code string }{
		{"INSERT INTO orders (order_id, customer_id, ordered_at, status, amount) VALUES (0, 1, now(), 'paid', 1)", "25006"},
		{"WITH gone AS (DELETE FROM orders RETURNING *) SELECT count(*) FROM gone", "25006"},
		{"CREATE TABLE analytics.x (a int)", "25006"},
		{"COPY orders TO PROGRAM 'cat > /tmp/weft-leak'", "42501"},
		{"SELECT * FROM public.users", "42501"},
		{"SELECT rolpassword FROM pg_authid", "42501"},
	}
	for _, c := range cases {
		err := dataagentpg.AsAnalyst(context.Background(), pool, "analytics", 5*time.Second, func(tx pgx.Tx) error {
			_, err := tx.Exec(context.Background(), c.sql)
			return err
		})
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != c.code {
			t.Errorf("%s: err = %v, want SQLSTATE %s", c.sql, err, c.code)
		}
	}
}

func TestExecutorResults(t *testing.T) {
	t.Parallel()
	pool := demoDB(t, "analytics")
	ex := dataagentpg.NewExecutor(pool)
	ctx := context.Background()
	res, err := ex.Query(ctx, "analytics", "SELECT status, count(*) AS n, sum(amount) AS total FROM orders GROUP BY status ORDER BY status")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 3 || res.Columns[1].Kind != "number" || res.Columns[0].Kind != "text" || res.Truncated {
		t.Fatalf("result = %+v", res)
	}
	var want string
	if err := pool.QueryRow(ctx, "SELECT sum(amount)::text FROM analytics.orders WHERE status = 'cancelled'").Scan(&want); err != nil {
		t.Fatal(err)
	}
	if res.Rows[0][0] != "cancelled" || res.Rows[0][2] != want {
		t.Errorf("first row = %v, want cancelled with total %s (exact numeric text)", res.Rows[0], want)
	}
	big, err := ex.Query(ctx, "analytics", "SELECT g FROM generate_series(1, 25000) AS g")
	if err != nil {
		t.Fatal(err)
	}
	if len(big.Rows) != 10000 || !big.Truncated || big.Limit != 10000 {
		t.Errorf("rows %d, truncated %v, limit %d: want 10,000 rows reported as truncated", len(big.Rows), big.Truncated, big.Limit)
	}
}

// Another login role runs analysis queries once Prepare makes it a member
// of the analyst role; before, it cannot take the role at all.
func TestAnalystRoleMembers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := demoDB(t, "analytics")
	var db string
	if err := pool.QueryRow(ctx, "SELECT current_database()").Scan(&db); err != nil {
		t.Fatal(err)
	}
	member := "weft_reader_" + db[len(db)-8:]
	if _, err := pool.Exec(ctx, "CREATE ROLE "+member+" LOGIN PASSWORD 'reader'"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = pool.Exec(context.Background(), "DROP OWNED BY "+member+"; DROP ROLE "+member) })
	cfg := pool.Config().Copy()
	cfg.ConnConfig.User, cfg.ConnConfig.Password = member, "reader"
	other, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := dataagentpg.NewExecutor(other).Query(ctx, "analytics", "SELECT count(*) FROM orders"); err == nil || !strings.Contains(err.Error(), "run dataagentpg.Prepare") {
		t.Fatalf("a role that is no member ran a query: %v", err)
	}
	if err := dataagentpg.Prepare(ctx, pool, "analytics", member); err != nil {
		t.Fatal(err)
	}
	res, err := dataagentpg.NewExecutor(other).Query(ctx, "analytics", "SELECT count(*) FROM orders")
	if err != nil || len(res.Rows) != 1 {
		t.Fatalf("member query: %v %+v", err, res)
	}
}
