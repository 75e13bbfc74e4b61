package dataagentpg

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"weft/internal/workflow/dataagent/nlsql"
)

// Demo configures the demo analytics data set.
type Demo struct {
	// Schema is the schema it is created in (default "analytics").
	Schema string
	// End is the day after the last order (default: the first day of the
	// current month, so that "last month" has data); orders cover the two
	// years before it.
	End time.Time
	// Seed varies the generated data (default 2024): the same Seed and End
	// give the same rows.
	Seed int
	// Members are roles, besides the installing one, that run analysis
	// queries (the application's login role): see Prepare.
	Members []string
}

// demoVersion changes when the generator changes; the schema's comment
// carries it, so an unchanged data set is not generated twice.
const demoVersion = "weft demo analytics v2"

// InstallDemo creates the demo data set in its own schema: regions,
// customers, products, orders and order_items with primary and foreign
// keys and bilingual comments, about 50,000 orders over two years with
// seasonality (Singles' Day, 618, the Spring Festival dip), weekends, growth
// and regional weights, generated in SQL from a seeded hash. It prepares
// the analyst role and stores the demo's business notes. A schema already
// holding the same version is left as it is; one holding an older demo is
// recreated; any other schema of that name is refused.
func InstallDemo(ctx context.Context, pool *pgxpool.Pool, d Demo) error {
	d = d.withDefaults()
	if err := CheckSchema(d.Schema); err != nil {
		return err
	}
	marker := fmt.Sprintf("%s; end %s; seed %d", demoVersion, d.End.Format("2006-01-02"), d.Seed)
	var comment *string
	err := pool.QueryRow(ctx, `SELECT obj_description(oid, 'pg_namespace') FROM pg_namespace WHERE nspname = $1`, d.Schema).Scan(&comment)
	switch {
	case err == pgx.ErrNoRows:
	case err != nil:
		return fmt.Errorf("install demo: %w", err)
	case comment == nil || !strings.HasPrefix(*comment, "weft demo analytics"):
		return fmt.Errorf("install demo: schema %s exists and is not a weft demo data set; choose another schema", d.Schema)
	case *comment == marker:
		return Prepare(ctx, pool, d.Schema, d.Members...)
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("install demo: %w", err)
	}
	defer conn.Release()
	tx, err := conn.Begin(ctx)
	if err != nil {
		return fmt.Errorf("install demo: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	sch := pgx.Identifier{d.Schema}.Sanitize()
	script := strings.NewReplacer("{{schema}}", sch, "{{seed}}", fmt.Sprint(d.Seed),
		"{{start}}", quoteLiteral(d.End.AddDate(-2, 0, 0).Format("2006-01-02")), "{{end}}", quoteLiteral(d.End.Format("2006-01-02")),
		"{{marker}}", quoteLiteral(marker)).Replace(demoSQL)
	if _, err := tx.Exec(ctx, script, pgx.QueryExecModeSimpleProtocol); err != nil {
		return fmt.Errorf("install demo: generate data: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("install demo: %w", err)
	}
	if _, err := pool.Exec(ctx, "ANALYZE "+sch+".regions, "+sch+".customers, "+sch+".products, "+sch+".orders, "+sch+".order_items"); err != nil {
		return fmt.Errorf("install demo: analyze: %w", err)
	}
	if err := Prepare(ctx, pool, d.Schema, d.Members...); err != nil {
		return err
	}
	notes := NewNotes(pool)
	if err := notes.Ensure(ctx); err != nil {
		return err
	}
	return notes.Replace(ctx, d.Schema, DemoNotes)
}

func (d Demo) withDefaults() Demo {
	if d.Schema == "" {
		d.Schema = "analytics"
	}
	if d.End.IsZero() {
		now := time.Now().UTC()
		d.End = time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	}
	d.End = time.Date(d.End.Year(), d.End.Month(), d.End.Day(), 0, 0, 0, 0, time.UTC)
	if d.Seed == 0 {
		d.Seed = 2024
	}
	return d
}

// DemoNotes are the demo's business notes.
var DemoNotes = []nlsql.Note{
	{ID: "gmv", Title: "GMV", Text: "GMV (成交额, 交易额, gross merchandise value) means the sum of paid orders' amounts."},
	{ID: "sales", Title: "Sales", Text: "Sales (销售额, revenue) means the sum of paid orders' amounts."},
	{ID: "units-sold", Title: "销量", Text: "销量 (units sold, quantity sold, sales volume) is the sum of the quantities of paid orders' items."},
	{ID: "east-china", Title: "华东", Text: "华东 (East China, eastern China) = Shanghai, Jiangsu, Zhejiang."},
	{ID: "south-china", Title: "华南", Text: "华南 (South China) = Guangdong."},
	{ID: "north-china", Title: "华北", Text: "华北 (North China) = Beijing, Shandong."},
	{ID: "active-customer", Title: "Active customer", Text: "An active customer (活跃客户, active user) ordered in the last 90 days."},
	{ID: "refund-rate", Title: "Refund rate", Text: "Refund rate (退款率) is the share of orders whose status is refunded."},
	{ID: "aov", Title: "AOV", Text: "Average order value (AOV, 客单价) is GMV divided by the number of paid orders."},
	{ID: "currency", Title: "Currency", Text: "All amounts are in CNY (人民币); order amounts include every item of the order."},
}
