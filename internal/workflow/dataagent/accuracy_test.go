package dataagent_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"weft/internal/workflow/dataagent"
)

// demoQuestion is a question with the answer computed independently: a
// query written by hand for it.
type demoQuestion struct {
	q, hand string
}

// demoQuestions are the twenty demo questions, ten in English and ten in
// Chinese, asked on 2026-01-15 (last month = 2025-12, last quarter = 2025
// Q4, last year = 2025).
var demoQuestions = []demoQuestion{
	{"What was the GMV last month?",
		`SELECT sum(amount) FROM analytics.orders WHERE status = 'paid' AND ordered_at >= DATE '2025-12-01' AND ordered_at < DATE '2026-01-01'`},
	{"GMV by region in 2025 Q3",
		`SELECT r.name, sum(o.amount) FROM analytics.orders o JOIN analytics.customers c USING (customer_id) JOIN analytics.regions r USING (region_id)
		 WHERE o.status = 'paid' AND o.ordered_at BETWEEN '2025-07-01' AND '2025-09-30 23:59:59.999999' GROUP BY r.name ORDER BY 2 DESC`},
	{"Top 5 products by sales last year",
		`SELECT p.name, sum(i.quantity * i.unit_price) FROM analytics.order_items i JOIN analytics.orders o USING (order_id) JOIN analytics.products p USING (product_id)
		 WHERE o.status = 'paid' AND extract(year FROM o.ordered_at) = 2025 GROUP BY p.name ORDER BY 2 DESC, 1 LIMIT 5`},
	{"How many orders were refunded in 2025?",
		`SELECT count(*) FROM analytics.orders WHERE status = 'refunded' AND date_trunc('year', ordered_at) = '2025-01-01'`},
	{"What was the average amount of paid orders in Shanghai last quarter?",
		`SELECT round(avg(o.amount), 2) FROM analytics.orders o JOIN analytics.customers c ON c.customer_id = o.customer_id
		 JOIN analytics.regions r ON r.region_id = c.region_id WHERE r.name = 'Shanghai' AND o.status = 'paid'
		 AND o.ordered_at >= '2025-10-01' AND o.ordered_at < '2026-01-01'`},
	{"Monthly GMV in 2025",
		`SELECT to_char(ordered_at, 'YYYY-MM') AS m, sum(amount) FROM analytics.orders WHERE status = 'paid'
		 AND extract(year FROM ordered_at) = 2025 GROUP BY m ORDER BY m`},
	{"What share of orders were refunded last year?",
		`SELECT sum(CASE WHEN status = 'refunded' THEN 1 ELSE 0 END), count(*), round(avg(CASE WHEN status = 'refunded' THEN 1.0 ELSE 0 END), 4)
		 FROM analytics.orders WHERE extract(year FROM ordered_at) = 2025`},
	{"How much did GMV grow in 2025 Q3 compared with Q2?",
		`WITH q AS (SELECT extract(quarter FROM ordered_at) AS qn, sum(amount) AS gmv FROM analytics.orders
		   WHERE status = 'paid' AND extract(year FROM ordered_at) = 2025 GROUP BY 1)
		 SELECT q3.gmv, q2.gmv, round((q3.gmv - q2.gmv) / q2.gmv, 4) FROM q q3, q q2 WHERE q3.qn = 3 AND q2.qn = 2`},
	{"How many active customers are there?",
		`SELECT count(DISTINCT customer_id) FROM analytics.orders WHERE ordered_at >= DATE '2026-01-15' - 90 AND ordered_at < DATE '2026-01-15'`},
	{"GMV by product category in East China last month",
		`SELECT p.category, sum(i.amount) FROM analytics.order_items i JOIN analytics.orders o ON o.order_id = i.order_id
		 JOIN analytics.products p ON p.product_id = i.product_id JOIN analytics.customers c ON c.customer_id = o.customer_id
		 JOIN analytics.regions r ON r.region_id = c.region_id
		 WHERE o.status = 'paid' AND r.name IN ('Shanghai', 'Jiangsu', 'Zhejiang') AND o.ordered_at >= '2025-12-01' AND o.ordered_at < '2026-01-01'
		 GROUP BY p.category ORDER BY 2 DESC`},
	{"上个月各品类的销量",
		`SELECT p.category, sum(i.quantity) FROM analytics.order_items i JOIN analytics.orders o USING (order_id) JOIN analytics.products p USING (product_id)
		 WHERE o.status = 'paid' AND o.ordered_at >= '2025-12-01' AND o.ordered_at < '2026-01-01' GROUP BY 1 ORDER BY 2 DESC, 1`},
	{"2025年第三季度各地区的GMV",
		`SELECT r.name_zh, sum(o.amount) FROM analytics.orders o JOIN analytics.customers c USING (customer_id) JOIN analytics.regions r USING (region_id)
		 WHERE o.status = 'paid' AND o.ordered_at >= '2025-07-01' AND o.ordered_at < '2025-10-01' GROUP BY 1 ORDER BY 2 DESC`},
	{"去年销量最高的5个商品",
		`SELECT p.name, sum(i.quantity) FROM analytics.order_items i JOIN analytics.orders o USING (order_id) JOIN analytics.products p USING (product_id)
		 WHERE o.status = 'paid' AND extract(year FROM o.ordered_at) = 2025 GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 5`},
	{"2025年每个月的退款订单数",
		`SELECT to_char(ordered_at, 'YYYY-MM'), count(*) FROM analytics.orders WHERE status = 'refunded'
		 AND ordered_at >= '2025-01-01' AND ordered_at < '2026-01-01' GROUP BY 1 ORDER BY 1`},
	{"上个月华东地区的平均订单金额是多少？",
		`SELECT round(avg(o.amount), 2) FROM analytics.orders o JOIN analytics.customers c USING (customer_id) JOIN analytics.regions r USING (region_id)
		 WHERE r.name_zh IN ('上海', '江苏', '浙江') AND o.ordered_at >= '2025-12-01' AND o.ordered_at < '2026-01-01'`},
	{"去年的退款率是多少？",
		`SELECT count(*) FILTER (WHERE status = 'refunded'), count(*), round(count(*) FILTER (WHERE status = 'refunded') * 1.0 / count(*), 4)
		 FROM analytics.orders WHERE ordered_at >= '2025-01-01' AND ordered_at < '2026-01-01'`},
	{"2025年第三季度GMV环比增长了多少？",
		`SELECT a, b, round((a - b) / b, 4) FROM (SELECT
		   (SELECT sum(amount) FROM analytics.orders WHERE status = 'paid' AND ordered_at >= '2025-07-01' AND ordered_at < '2025-10-01') AS a,
		   (SELECT sum(amount) FROM analytics.orders WHERE status = 'paid' AND ordered_at >= '2025-04-01' AND ordered_at < '2025-07-01') AS b) AS t`},
	{"当前有多少活跃客户？",
		`SELECT count(*) FROM (SELECT customer_id FROM analytics.orders WHERE ordered_at >= '2025-10-17' AND ordered_at < '2026-01-15' GROUP BY customer_id) AS a`},
	{"去年新注册客户最多的3个地区",
		`SELECT r.name_zh, count(*) FROM analytics.customers c JOIN analytics.regions r USING (region_id)
		 WHERE c.signup_date BETWEEN '2025-01-01' AND '2025-12-31' GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 3`},
	{"2025年上海的已支付订单数量",
		`SELECT count(*) FROM analytics.orders o JOIN analytics.customers c USING (customer_id) JOIN analytics.regions r USING (region_id)
		 WHERE r.name_zh = '上海' AND o.status = 'paid' AND extract(year FROM o.ordered_at) = 2025`},
}

// Every demo question is answered with the same numbers as its hand-written
// query. The accuracy and the p50 wall time of a question are logged.
func TestAccuracyOfTheTwentyDemoQuestions(t *testing.T) {
	t.Parallel()
	pool := demoPool(t)
	a := newAgent(t, pool, nil)
	correct := 0
	var times []time.Duration
	for i, dq := range demoQuestions {
		start := time.Now()
		res := a.ask(t, fmt.Sprintf("accuracy-%d", i), dq.q, false)
		times = append(times, time.Since(start))
		s := res.State
		got, sql := answer(t, s)
		if s.Status != dataagent.StatusAnswered || got == nil {
			t.Errorf("%s: status %s, feasibility %+v", dq.q, s.Status, s.Feasibility)
			continue
		}
		if err := sameNumbers(got.Rows, handRows(t, pool, dq.hand)); err != nil {
			t.Errorf("%s: %v\n%s\ngot %v", dq.q, err, sql, got.Rows)
			continue
		}
		correct++
	}
	slices.Sort(times)
	t.Logf("accuracy: %d/%d (%.0f%%); wall time per question p50 %s, max %s (offline provider, no Python step)",
		correct, len(demoQuestions), 100*float64(correct)/float64(len(demoQuestions)), times[len(times)/2].Round(time.Millisecond), times[len(times)-1].Round(time.Millisecond))
}

// BenchmarkQuestion is a question's wall time with the offline provider,
// from the message to the report (no Python step): p50 over the twenty.
func BenchmarkQuestion(b *testing.B) {
	pool := demoPool(b)
	a := newAgent(b, pool, nil)
	var times []time.Duration
	n := 0
	for b.Loop() {
		for _, dq := range demoQuestions {
			start := time.Now()
			a.ask(b, fmt.Sprintf("bench-%d", n), dq.q, false)
			times = append(times, time.Since(start))
			n++
		}
	}
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "p50-ms/question")
	b.ReportMetric(float64(times[len(times)*9/10].Microseconds())/1000, "p90-ms/question")
}
