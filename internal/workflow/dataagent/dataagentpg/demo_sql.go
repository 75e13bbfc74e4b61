package dataagentpg

// demoSQL creates and fills the demo schema in one transaction. u(key) is
// a uniform number in [0, 1) from a seeded hash of key: the same key and
// seed give the same number, so the data is the same on every install.
const demoSQL = `
DROP SCHEMA IF EXISTS {{schema}} CASCADE;
CREATE SCHEMA {{schema}};
COMMENT ON SCHEMA {{schema}} IS {{marker}};

CREATE FUNCTION pg_temp.u(key text) RETURNS double precision LANGUAGE sql IMMUTABLE AS
$$ SELECT ((hashtextextended(key, {{seed}}) & 2147483647)::double precision) / 2147483648.0 $$;

CREATE TABLE {{schema}}.regions (
    region_id integer PRIMARY KEY,
    name      text NOT NULL UNIQUE,
    name_zh   text NOT NULL UNIQUE
);
COMMENT ON TABLE {{schema}}.regions IS 'Provinces and municipalities where customers live (地区, 区域, 省份, region, province)';
COMMENT ON COLUMN {{schema}}.regions.name IS 'Region name in English';
COMMENT ON COLUMN {{schema}}.regions.name_zh IS 'Region name in Chinese (中文名)';

CREATE TABLE {{schema}}.customers (
    customer_id integer PRIMARY KEY,
    name        text NOT NULL,
    region_id   integer NOT NULL,
    segment     text NOT NULL CHECK (segment IN ('consumer', 'business')),
    signup_date date NOT NULL
);
COMMENT ON TABLE {{schema}}.customers IS 'Customers who buy from the shop (客户, 顾客, 用户, client, buyer)';
COMMENT ON COLUMN {{schema}}.customers.name IS 'Customer name (客户名称)';
COMMENT ON COLUMN {{schema}}.customers.segment IS 'Customer segment (客户类型, 细分): consumer (个人, 个人客户), business (企业, 企业客户)';
COMMENT ON COLUMN {{schema}}.customers.signup_date IS 'Day the customer signed up (注册日期, 注册, 新注册, signup, sign up, registration, new)';

CREATE TABLE {{schema}}.products (
    product_id integer PRIMARY KEY,
    name       text NOT NULL,
    category   text NOT NULL,
    unit_price numeric(10,2) NOT NULL CHECK (unit_price > 0)
);
COMMENT ON TABLE {{schema}}.products IS 'Products on sale (商品, 产品, goods)';
COMMENT ON COLUMN {{schema}}.products.name IS 'Product name (商品名称)';
COMMENT ON COLUMN {{schema}}.products.category IS 'Product category (品类, 类别, 分类, 类目): Electronics (电子产品, 数码), Home (家居), Apparel (服装), Books (图书), Beauty (美妆)';
COMMENT ON COLUMN {{schema}}.products.unit_price IS 'List price per unit in CNY (单价, price)';

CREATE TABLE {{schema}}.orders (
    order_id    integer PRIMARY KEY,
    customer_id integer NOT NULL,
    ordered_at  timestamp NOT NULL,
    status      text NOT NULL CHECK (status IN ('paid', 'refunded', 'cancelled')),
    amount      numeric(12,2) NOT NULL
);
COMMENT ON TABLE {{schema}}.orders IS 'Orders placed by customers (订单, purchase)';
COMMENT ON COLUMN {{schema}}.orders.ordered_at IS 'When the order was placed (下单时间, 下单, order date, order time)';
COMMENT ON COLUMN {{schema}}.orders.status IS 'Order status (状态, 订单状态): paid (已支付, 支付), refunded (已退款, 退款), cancelled (已取消, 取消)';
COMMENT ON COLUMN {{schema}}.orders.amount IS 'Order total in CNY, the sum of its items (订单金额, 金额, order value)';

CREATE TABLE {{schema}}.order_items (
    order_item_id integer PRIMARY KEY,
    order_id      integer NOT NULL,
    product_id    integer NOT NULL,
    quantity      integer NOT NULL CHECK (quantity > 0),
    unit_price    numeric(10,2) NOT NULL,
    amount        numeric(12,2) NOT NULL
);
COMMENT ON TABLE {{schema}}.order_items IS 'Lines of an order, one product each (订单明细, 明细, order line)';
COMMENT ON COLUMN {{schema}}.order_items.quantity IS 'Units of the product ordered (件数, 购买件数, units)';
COMMENT ON COLUMN {{schema}}.order_items.unit_price IS 'Price per unit paid (成交单价)';
COMMENT ON COLUMN {{schema}}.order_items.amount IS 'Line total, quantity times unit price (明细金额, 金额, line amount)';

INSERT INTO {{schema}}.regions (region_id, name, name_zh) VALUES
    (1, 'Shanghai', '上海'), (2, 'Jiangsu', '江苏'), (3, 'Zhejiang', '浙江'), (4, 'Beijing', '北京'),
    (5, 'Guangdong', '广东'), (6, 'Sichuan', '四川'), (7, 'Hubei', '湖北'), (8, 'Shandong', '山东');

-- 5,000 customers, signed up evenly over the year before the orders start
-- and the two years of orders; regions weighted (Guangdong most, Hubei least).
INSERT INTO {{schema}}.customers (customer_id, name, region_id, segment, signup_date)
SELECT i, 'Customer ' || lpad(i::text, 4, '0'),
       CASE WHEN r < 0.18 THEN 5 WHEN r < 0.33 THEN 1 WHEN r < 0.47 THEN 2 WHEN r < 0.60 THEN 3
            WHEN r < 0.72 THEN 4 WHEN r < 0.82 THEN 8 WHEN r < 0.92 THEN 6 ELSE 7 END,
       CASE WHEN pg_temp.u('segment:' || i) < 0.2 THEN 'business' ELSE 'consumer' END,
       ({{start}}::date - 365) + ((i - 1) * 1095 / 5000)
FROM generate_series(1, 5000) AS i, LATERAL (SELECT pg_temp.u('region:' || i) AS r) AS rr;

-- 200 products, 40 per category, priced around the category's level.
INSERT INTO {{schema}}.products (product_id, name, category, unit_price)
SELECT i, cat || ' #' || lpad(i::text, 3, '0'), cat,
       round((base * (0.5 + pg_temp.u('price:' || i)))::numeric, 2)
FROM generate_series(1, 200) AS i,
     LATERAL (SELECT (ARRAY['Electronics', 'Home', 'Apparel', 'Books', 'Beauty'])[(i - 1) % 5 + 1] AS cat,
                     (ARRAY[800, 200, 150, 50, 120])[(i - 1) % 5 + 1] AS base) AS c;

-- Orders per day: a base rate times the month's season (618 in June,
-- Singles' Day in November, the Spring Festival dip in February), weekends,
-- growth over the two years and noise. Customers are those signed up by then.
CREATE TEMP TABLE day_orders ON COMMIT DROP AS
SELECT day, dn,
       greatest(1, round(66.5 * (ARRAY[0.90, 0.70, 0.95, 1.00, 1.00, 1.15, 0.95, 0.95, 1.00, 1.05, 1.35, 1.20])[extract(month FROM day)::int]
           * CASE WHEN extract(isodow FROM day) >= 6 THEN 1.15 ELSE 0.94 END
           * (0.93 + 0.14 * dn / 730.0) * (0.85 + 0.30 * pg_temp.u('day:' || dn))))::int AS n
FROM (SELECT d::date AS day, (row_number() OVER (ORDER BY d) - 1)::int AS dn
      FROM generate_series({{start}}::date, {{end}}::date - 1, interval '1 day') AS d) AS days;

CREATE TEMP TABLE new_orders ON COMMIT DROP AS
SELECT (row_number() OVER (ORDER BY day, k))::int AS order_id, day FROM day_orders, generate_series(1, n) AS k;

-- One to four lines an order; popular products sell more (a skewed draw).
CREATE TEMP TABLE new_items ON COMMIT DROP AS
SELECT (row_number() OVER (ORDER BY o.order_id, k))::int AS order_item_id, o.order_id, p.product_id, q.quantity,
       p.unit_price, q.quantity * p.unit_price AS amount
FROM new_orders AS o,
     generate_series(1, 1 + floor(pg_temp.u('lines:' || o.order_id) * 3.2)::int) AS k,
     LATERAL (SELECT 1 + floor(200 * pg_temp.u('product:' || o.order_id || ':' || k) ^ 1.6)::int AS product_id) AS pick
     JOIN {{schema}}.products AS p ON p.product_id = pick.product_id,
     LATERAL (SELECT 1 + floor(pg_temp.u('quantity:' || o.order_id || ':' || k) * 3)::int AS quantity) AS q;

INSERT INTO {{schema}}.orders (order_id, customer_id, ordered_at, status, amount)
SELECT o.order_id,
       1 + floor(pg_temp.u('customer:' || o.order_id) * least(5000, (o.day - ({{start}}::date - 365)) * 5000 / 1095 + 1))::int,
       o.day + make_interval(secs => 28800 + floor(pg_temp.u('time:' || o.order_id) * 54000)),
       CASE WHEN st.s < 0.06 THEN 'refunded' WHEN st.s < 0.10 THEN 'cancelled' ELSE 'paid' END,
       t.total
FROM new_orders AS o
JOIN (SELECT order_id, sum(amount) AS total FROM new_items GROUP BY order_id) AS t ON t.order_id = o.order_id,
     LATERAL (SELECT pg_temp.u('status:' || o.order_id) AS s) AS st;

INSERT INTO {{schema}}.order_items (order_item_id, order_id, product_id, quantity, unit_price, amount)
SELECT order_item_id, order_id, product_id, quantity, unit_price, amount FROM new_items;

ALTER TABLE {{schema}}.customers ADD FOREIGN KEY (region_id) REFERENCES {{schema}}.regions;
ALTER TABLE {{schema}}.orders ADD FOREIGN KEY (customer_id) REFERENCES {{schema}}.customers;
ALTER TABLE {{schema}}.order_items ADD FOREIGN KEY (order_id) REFERENCES {{schema}}.orders;
ALTER TABLE {{schema}}.order_items ADD FOREIGN KEY (product_id) REFERENCES {{schema}}.products;

CREATE INDEX ON {{schema}}.orders (ordered_at);
CREATE INDEX ON {{schema}}.orders (customer_id);
CREATE INDEX ON {{schema}}.order_items (order_id);
CREATE INDEX ON {{schema}}.order_items (product_id);
CREATE INDEX ON {{schema}}.customers (region_id);
`
