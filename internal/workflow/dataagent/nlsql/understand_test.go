package nlsql

import (
	"strings"
	"testing"
)

// Questions phrased other ways than the demo's twenty: each must read to a
// query with these fragments (and, for the honest refusals, not read at all).
func TestUnderstandPhrasings(t *testing.T) {
	t.Parallel()
	cases := []struct {
		q    string
		want []string // fragments of the SQL, or of the problems when not feasible
		ok   bool
	}{
		{"Show me GMV for each region last month", []string{"GROUP BY regions.name", "orders.status = 'paid'", "'2025-12-01'"}, true},
		{"What were total sales in Jiangsu in March 2025?", []string{"SUM(orders.amount) AS sales", "regions.name = 'Jiangsu'", ">= '2025-03-01'", "< '2025-04-01'"}, true},
		{"Number of orders per month in 2024", []string{"COUNT(*) AS order_count", "date_trunc('month'", "'2024-01-01'", "ORDER BY month"}, true},
		{"Which category had the highest GMV last year?", []string{"SUM(order_items.amount) AS gmv", "GROUP BY products.category", "LIMIT 1"}, true},
		{"Average order amount by customer segment in 2025", []string{"ROUND(AVG(orders.amount), 2)", "GROUP BY customers.segment"}, true},
		{"How many customers signed up last year?", []string{"FROM customers", "customers.signup_date >= '2025-01-01'"}, true},
		{"Refund rate by region last quarter", []string{"FILTER (WHERE orders.status = 'refunded') AS part", "GROUP BY regions.name", "'2025-10-01'"}, true},
		{"GMV year over year for 2025", []string{"AS current_gmv", ">= '2024-01-01' AND orders.ordered_at < '2025-01-01') AS previous_gmv"}, true},
		{"What was the GMV in the last 30 days?", []string{">= '2025-12-16'", "< '2026-01-15'"}, true},
		{"How many business customers are in Beijing?", []string{"customers.segment = 'business'", "regions.name = 'Beijing'"}, true},
		{"What is the largest order amount last month?", []string{"MAX(orders.amount)"}, true},
		{"Top 3 regions by number of active customers", []string{"EXISTS (SELECT 1 FROM orders AS q1", "LIMIT 3", "GROUP BY regions.name"}, true},
		{"List the products in the Books category", []string{"SELECT products.name", "products.category = 'Books'"}, true},
		{"上季度各品类的销售额", []string{"SUM(order_items.amount) AS sales", "GROUP BY products.category", "'2025-10-01'"}, true},
		{"2024年华南的订单数", []string{"regions.name = 'Guangdong'", "'2024-01-01'"}, true},
		{"去年每个季度的GMV", []string{"date_trunc('quarter'", "ORDER BY quarter"}, true},
		{"2025年按月份的GMV", []string{"date_trunc('month'", "ORDER BY month"}, true},
		{"去年每个月份的订单数", []string{"date_trunc('month'", "COUNT(*)"}, true},
		{"2024年各月份的销售额", []string{"date_trunc('month'", "'2024-01-01'"}, true},
		{"按年份的订单数", []string{"date_trunc('year'", "COUNT(*)"}, true},
		{"最近30天的退款订单有多少？", []string{"orders.status = 'refunded'", ">= '2025-12-16'"}, true},
		{"哪个地区的客户最多？", []string{"GROUP BY regions.name_zh", "COUNT(*) AS customer_count", "LIMIT 1"}, true},
		{"2025年3月上海的GMV", []string{"regions.name_zh = '上海'", "'2025-03-01'"}, true},
		{"去年企业客户的GMV是多少", []string{"customers.segment = 'business'", "orders.status = 'paid'"}, true},
		{"去年GMV同比增长多少", []string{"AS previous_gmv", "'2024-01-01'"}, true},
		{"What was the GMV?", []string{"SUM(orders.amount) AS gmv", "WHERE orders.status = 'paid'"}, true},
		{"Which 3 regions had the lowest GMV last quarter?", []string{"ORDER BY gmv ASC", "LIMIT 3"}, true},
		{"How many orders did each customer segment place in 2025?", []string{"GROUP BY customers.segment", "COUNT(*) AS order_count"}, true},
		{"Which segment placed the most orders?", []string{"GROUP BY customers.segment", "COUNT(*) AS order_count", "LIMIT 1"}, true},
		{"Which status has the most orders?", []string{"GROUP BY orders.status", "COUNT(*) AS order_count", "LIMIT 1"}, true},
		{"GMV of Electronics last month", []string{"SUM(order_items.amount)", "products.category = 'Electronics'"}, true},
		{"Average unit price of products by category", []string{"AVG(products.unit_price)", "FROM products"}, true},
		{"各地区上个月的订单数和GMV", []string{"多个指标"}, false},
		{"average GMV by region", []string{`"average" cannot be applied to GMV`}, false},
		{"GMV growth by quarter in 2025", []string{"a growth by quarter is not defined here"}, false},
		{"2025年每个月的GMV环比增长", []string{"增长在此没有定义"}, false},
		{"2025年各月的活跃客户数", []string{"按其自身的时间段定义"}, false},
		// Honest: what the schema and the notes do not hold is named, never guessed.
		{"What is the weather in Shanghai tomorrow?", []string{`"weather"`}, false},
		{"How many employees do we have?", []string{`"employees"`}, false},
		{"去年的利润是多少？", []string{"“利润”"}, false},
		{"上个月的库存周转率是多少？", []string{"“库存周转”"}, false},
		{"What was the AOV last month?", []string{"AOV", "divided"}, false},
		{"What was the average order value per supplier?", []string{`"supplier"`}, false},
	}
	for _, c := range cases {
		t.Run(c.q, func(t *testing.T) {
			t.Parallel()
			u := Understand(Question{Parts: []string{c.q}, Catalog: shop, Notes: shopNotes, Now: asOf})
			if u.Feasible != c.ok {
				t.Fatalf("feasible = %v, want %v: %v\n%s", u.Feasible, c.ok, u.Problems, u.SQL)
			}
			text := u.SQL
			if !c.ok {
				text = strings.Join(u.Problems, "\n")
			}
			for _, w := range c.want {
				if !strings.Contains(text, w) {
					t.Errorf("missing %q in\n%s", w, text)
				}
			}
		})
	}
}

// A follow-up changes what it names and keeps the rest.
func TestFollowUps(t *testing.T) {
	t.Parallel()
	cases := []struct {
		parts []string
		want  []string
		not   []string
	}{
		{[]string{"What was the GMV in Shanghai last month?", "what about Jiangsu?"}, []string{"regions.name = 'Jiangsu'", "'2025-12-01'"}, []string{"Shanghai"}},
		{[]string{"What was the GMV last month?", "and for last quarter?"}, []string{"'2025-10-01'", "orders.status = 'paid'"}, []string{"'2025-12-01'"}},
		{[]string{"上个月的GMV是多少？", "只看华东"}, []string{"regions.name IN ('Shanghai', 'Jiangsu', 'Zhejiang')", "'2025-12-01'"}, nil},
		{[]string{"GMV by region in 2025 Q3", "by category instead"}, []string{"GROUP BY products.category"}, []string{"regions.name"}},
		{[]string{"2025年第三季度各地区的GMV", "那第二季度呢？"}, []string{"'2025-04-01'", "GROUP BY regions.name_zh"}, []string{"2026"}},
		{[]string{"How many orders were refunded in 2025?", "and the GMV?"}, []string{"SUM(orders.amount) AS gmv"}, []string{"COUNT(*)"}},
		{[]string{"去年各地区的GMV是多少？", "按月份呢？"}, []string{"date_trunc('month'", "'2025-01-01'"}, nil},
	}
	for _, c := range cases {
		u := Understand(Question{Parts: c.parts, Catalog: shop, Notes: shopNotes, Now: asOf})
		if !u.Feasible {
			t.Errorf("%q: %v", c.parts, u.Problems)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(u.SQL, w) {
				t.Errorf("%q: missing %q in\n%s", c.parts, w, u.SQL)
			}
		}
		for _, w := range c.not {
			if strings.Contains(u.SQL, w) {
				t.Errorf("%q: still has %q in\n%s", c.parts, w, u.SQL)
			}
		}
	}
}

// Feedback words that map to nothing are reported, not fatal.
func TestFeedbackIsLenient(t *testing.T) {
	t.Parallel()
	u := Understand(Question{Parts: []string{"GMV by region last month"}, Feedback: []string{"only East China, and make it snappy"},
		Catalog: shop, Notes: shopNotes, Now: asOf})
	if !u.Feasible || !strings.Contains(u.SQL, "IN ('Shanghai', 'Jiangsu', 'Zhejiang')") || len(u.Ignored) != 1 || u.Ignored[0] != "snappy" {
		t.Errorf("feasible %v, ignored %q\n%s", u.Feasible, u.Ignored, u.SQL)
	}
}

func TestNotesCompile(t *testing.T) {
	t.Parallel()
	d := newDomain(shop, shopNotes, asOf)
	want := map[string]string{
		"gmv":    "SUM(orders.amount) where orders.status = 'paid'",
		"units":  "SUM(order_items.quantity) where orders.status = 'paid'",
		"east":   "regions.name IN ('Shanghai', 'Jiangsu', 'Zhejiang')",
		"south":  "regions.name = 'Guangdong'",
		"active": "customers with a row of orders (orders.customer_id = customers.customer_id) where orders.ordered_at is in 2025-10-17 – 2026-01-14",
		"refund": "share of COUNT(orders) with orders.status = 'refunded'",
	}
	for _, def := range d.notes {
		if w, ok := want[def.note.ID]; ok && def.meaning() != w {
			t.Errorf("note %s = %s %q (%s), want %q", def.note.ID, def.kind, def.meaning(), def.problem, w)
		}
		if def.note.ID == "aov" && (def.kind != defInfo || !strings.Contains(def.problem, "divided")) {
			t.Errorf("aov compiled as %s: %q", def.kind, def.meaning())
		}
	}
}

func TestIntent(t *testing.T) {
	t.Parallel()
	cases := []struct {
		msg          string
		previous     bool
		analysis, fu bool
	}{
		{"What was the GMV last month?", false, true, false},
		{"GMV by region", false, true, false},
		{"上个月的GMV是多少？", false, true, false},
		{"Hello!", false, false, false},
		{"你好", false, false, false},
		{"Thanks", true, false, false},
		{"What can you do?", false, false, false},
		{"Tell me a joke", false, false, false},
		{"and for last quarter?", true, true, true},
		{"只看华东", true, true, true},
		{"那第二季度呢？", true, true, true},
		{"2024?", true, true, true},
		{"只看华东", false, false, false},
	}
	for _, c := range cases {
		in := ClassifyIntent(c.msg, c.previous, "analytics", asOf)
		if in.Analysis != c.analysis || in.FollowUp != c.fu || (!in.Analysis && in.Reply == "") {
			t.Errorf("%q (previous %v): %+v", c.msg, c.previous, in)
		}
	}
}

func TestEnhance(t *testing.T) {
	t.Parallel()
	for _, c := range [][3]string{
		{"What was the GMV last month?", "and for last quarter?", "What was the GMV last quarter?"},
		{"上个月的GMV是多少？", "只看华东", "上个月的GMV是多少？（华东）"},
		{"2025年第三季度各地区的GMV", "那第二季度呢？", "2025年第二季度各地区的GMV"},
		{"GMV in Shanghai last month", "what about Jiangsu?", "GMV in Shanghai last month (Jiangsu)"},
	} {
		if got := Enhance(c[0], c[1], asOf); got != c[2] {
			t.Errorf("Enhance(%q, %q) = %q, want %q", c[0], c[1], got, c[2])
		}
	}
}
