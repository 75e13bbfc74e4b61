package nlsql

import "time"

// shop is the demo analytics schema as the catalog reader reports it.
var shop = Catalog{Schema: "analytics", Tables: []Table{
	{Name: "regions", Comment: "Provinces and municipalities where customers live (地区, 区域, 省份, region, province)", PrimaryKey: []string{"region_id"},
		Columns: []Column{
			{Name: "region_id", Type: "integer"},
			{Name: "name", Type: "text", Comment: "Region name in English", Values: []string{"Beijing", "Guangdong", "Hubei", "Jiangsu", "Shandong", "Shanghai", "Sichuan", "Zhejiang"}},
			{Name: "name_zh", Type: "text", Comment: "Region name in Chinese (中文名)", Values: []string{"上海", "北京", "四川", "山东", "广东", "江苏", "浙江", "湖北"}},
		}},
	{Name: "customers", Comment: "Customers who buy from the shop (客户, 顾客, 用户, client, buyer)", PrimaryKey: []string{"customer_id"},
		ForeignKeys: []ForeignKey{{Columns: []string{"region_id"}, RefTable: "regions", RefColumns: []string{"region_id"}}},
		Columns: []Column{
			{Name: "customer_id", Type: "integer"},
			{Name: "name", Type: "text", Comment: "Customer name (客户名称)"},
			{Name: "region_id", Type: "integer"},
			{Name: "segment", Type: "text", Comment: "Customer segment (客户类型, 细分): consumer (个人, 个人客户), business (企业, 企业客户)", Values: []string{"business", "consumer"}},
			{Name: "signup_date", Type: "date", Comment: "Day the customer signed up (注册日期, 注册, 新注册, signup, sign up, registration, new)"},
		}},
	{Name: "products", Comment: "Products on sale (商品, 产品, goods)", PrimaryKey: []string{"product_id"},
		Columns: []Column{
			{Name: "product_id", Type: "integer"},
			{Name: "name", Type: "text", Comment: "Product name (商品名称)"},
			{Name: "category", Type: "text", Comment: "Product category (品类, 类别, 分类, 类目): Electronics (电子产品, 数码), Home (家居), Apparel (服装), Books (图书), Beauty (美妆)",
				Values: []string{"Apparel", "Beauty", "Books", "Electronics", "Home"}},
			{Name: "unit_price", Type: "numeric(10,2)", Comment: "List price per unit in CNY (单价, price)"},
		}},
	{Name: "orders", Comment: "Orders placed by customers (订单, purchase)", PrimaryKey: []string{"order_id"},
		ForeignKeys: []ForeignKey{{Columns: []string{"customer_id"}, RefTable: "customers", RefColumns: []string{"customer_id"}}},
		Columns: []Column{
			{Name: "order_id", Type: "integer"},
			{Name: "customer_id", Type: "integer"},
			{Name: "ordered_at", Type: "timestamp without time zone", Comment: "When the order was placed (下单时间, 下单, order date, order time)"},
			{Name: "status", Type: "text", Comment: "Order status (状态, 订单状态): paid (已支付, 支付), refunded (已退款, 退款), cancelled (已取消, 取消)",
				Values: []string{"cancelled", "paid", "refunded"}},
			{Name: "amount", Type: "numeric(12,2)", Comment: "Order total in CNY, the sum of its items (订单金额, 金额, order value)"},
		}},
	{Name: "order_items", Comment: "Lines of an order, one product each (订单明细, 明细, order line)", PrimaryKey: []string{"order_item_id"},
		ForeignKeys: []ForeignKey{
			{Columns: []string{"order_id"}, RefTable: "orders", RefColumns: []string{"order_id"}},
			{Columns: []string{"product_id"}, RefTable: "products", RefColumns: []string{"product_id"}},
		},
		Columns: []Column{
			{Name: "order_item_id", Type: "integer"},
			{Name: "order_id", Type: "integer"},
			{Name: "product_id", Type: "integer"},
			{Name: "quantity", Type: "integer", Comment: "Units of the product ordered (件数, 购买件数, units)"},
			{Name: "unit_price", Type: "numeric(10,2)", Comment: "Price per unit paid (成交单价)"},
			{Name: "amount", Type: "numeric(12,2)", Comment: "Line total, quantity times unit price (明细金额, 金额, line amount)"},
		}},
}}

var shopNotes = []Note{
	{ID: "gmv", Text: "GMV (成交额, 交易额, gross merchandise value) means the sum of paid orders' amounts."},
	{ID: "sales", Text: "Sales (销售额, revenue) means the sum of paid orders' amounts."},
	{ID: "units", Text: "销量 (units sold, quantity sold, sales volume) is the sum of the quantities of paid orders' items."},
	{ID: "east", Text: "华东 (East China, eastern China) = Shanghai, Jiangsu, Zhejiang."},
	{ID: "south", Text: "华南 (South China) = Guangdong."},
	{ID: "active", Text: "An active customer (活跃客户, active user) ordered in the last 90 days."},
	{ID: "refund", Text: "Refund rate (退款率) is the share of orders whose status is refunded."},
	{ID: "aov", Text: "Average order value (AOV, 客单价) is GMV divided by the number of paid orders."},
	{ID: "cny", Text: "All amounts are in CNY (人民币)."},
}

var asOf = time.Date(2026, 1, 15, 10, 30, 0, 0, time.UTC)
