package nlsql

import (
	"testing"
)

func TestExplore(t *testing.T) {
	qs := []string{
		"What was the GMV last month?",
		"GMV by region in 2025 Q3",
		"Top 5 products by sales last year",
		"How many orders were refunded in 2025?",
		"What was the average order amount of paid orders in Shanghai last quarter?",
		"Monthly GMV in 2025",
		"What share of orders were refunded last year?",
		"How much did GMV grow in 2025 Q3 compared with Q2?",
		"How many active customers are there?",
		"GMV by product category in East China last month",
		"上个月的GMV是多少？",
		"2025年第三季度各地区的GMV",
		"去年销量最高的5个商品",
		"2025年每个月的退款订单数",
		"上个月华东地区的平均订单金额是多少？",
		"去年的退款率是多少？",
		"2025年第三季度GMV环比增长了多少？",
		"当前有多少活跃客户？",
		"去年新注册客户最多的3个地区",
		"2025年上海的已支付订单数量",
		"What was the average delivery time last month?",
		"What is the AOV last month?",
		"What was the profit last year?",
		"去年各品类的GMV占比",
		"List the products in the Books category",
	}
	for _, q := range qs {
		u := Understand(Question{Parts: []string{q}, Catalog: shop, Notes: shopNotes, Now: asOf})
		t.Logf("\nQ: %s\nfeasible=%v kind=%s problems=%v adjusted=%v\n%s\n", q, u.Feasible, u.Spec.Kind, u.Problems, u.Spec.Adjusted, u.SQL)
	}
}
