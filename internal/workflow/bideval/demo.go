package bideval

import (
	_ "embed"

	"weft/internal/llm"
)

// DemoHarborBid is a bid document for the demo's Harbor Systems, which the demo loads without
// one: upload it on the tender page (the file is demodocs/harbor-bid.md), then retry the
// evaluation's dead letter, and it completes.
//
//go:embed demodocs/harbor-bid.md
var DemoHarborBid string

// DemoTenant is the demo data `weft demo` loads: a tender with a rule pack
// and four suppliers whose bids end four ways — a pass, a human review, a
// disqualification by a hard rule, and a dead letter an operator can act on
// (a supplier with no bid documents: upload one, then retry).
type DemoTenant struct {
	TenantID   string
	TenantName string
	Project    Project
	Desc       string
	RulePack   RulePack
	Suppliers  []DemoSupplier
}

// DemoSupplier is a supplier with its bid documents.
type DemoSupplier struct {
	ID        string
	Name      string
	Expect    string // what the demo shows: "pass", "review", "disqualified" or "dead_letter"
	Documents []DemoDocument
}

// DemoDocument is one bid document.
type DemoDocument struct {
	ID    string
	Title string
	Body  string
}

func f(v float64) *float64 { return &v }

// DemoRulePack is the demo tender's rule pack.
func DemoRulePack() RulePack {
	return RulePack{
		Version: "dc-net-2026.1",
		HardRules: []HardRule{
			{ID: "R1", Name: "ISO 9001 certificate", Kind: RuleRequiredDocument, Query: "ISO 9001 quality management certificate 质量管理体系认证",
				Keywords: []string{"ISO 9001", "ISO9001", "质量管理体系认证"}, Severity: "flag"},
			{ID: "R2", Name: "Bid price within budget", Kind: RuleMaxPrice, Query: "total bid price 投标总价 报价", Severity: "disqualify"},
			{ID: "R3", Name: "Delivery within 90 days", Kind: RuleMaxDeliveryDays, Query: "delivery days schedule 交货期", Max: 90, Severity: "flag"},
			{ID: "R4", Name: "Warranty of at least 24 months", Kind: RuleMinNumber, Query: "warranty months 质保", Pattern: `(?:warranty|质保期?)[^0-9\n]{0,20}?(\d+)\s*(?:months?|个月)`, Min: 24, Severity: "flag"},
		},
		Criteria: []Criterion{
			{ID: "C1", Name: "Technical solution", Weight: 0.4, MaxScore: 10, Query: "architecture redundancy high availability uptime disaster recovery 冗余 高可用",
				Rubric: llm.Rubric{Keywords: []string{"high availability", "redundant", "disaster recovery", "spine-leaf"},
					Numbers: []llm.NumberRule{{Label: "uptime", Pattern: `(\d+(?:\.\d+)?)\s*%\s*(?:uptime|availability)`, Min: f(99.9)}}}},
			{ID: "C2", Name: "Delivery and implementation", Weight: 0.2, MaxScore: 10, Query: "project plan milestones delivery implementation on-site 实施计划",
				Rubric: llm.Rubric{Keywords: []string{"project plan", "milestone", "on-site"},
					Numbers: []llm.NumberRule{{Label: "delivery days", Pattern: `(?:deliver\w*|交货期)[^0-9\n]{0,30}?(\d+)\s*(?:calendar )?(?:days|天)`, Max: f(60)}}}},
			{ID: "C3", Name: "Service and warranty", Weight: 0.2, MaxScore: 10, Query: "support service response time warranty spare parts 7x24 售后",
				Rubric: llm.Rubric{Keywords: []string{"24/7", "spare parts", "on-site support"},
					Numbers: []llm.NumberRule{{Label: "response hours", Pattern: `respon\w*[^0-9\n]{0,30}?(\d+)\s*hours?`, Max: f(4)},
						{Label: "warranty months", Pattern: `warranty[^0-9\n]{0,20}?(\d+)\s*months?`, Min: f(36)}}}},
			{ID: "C4", Name: "Qualifications and references", Weight: 0.2, MaxScore: 10, Query: "certification ISO reference projects customers case 资质 案例",
				Rubric: llm.Rubric{Keywords: []string{"ISO 9001", "ISO 27001", "reference"}}},
		},
		Thresholds: Thresholds{MinConfidence: 0.55, MinCitationCoverage: 0.8, HighScore: 80, OutlierDelta: 35, MinPeers: 2},
	}
}

// Demo is the demo tenant's data. Ids are prefixed with tenantID so the
// same data can be loaded into a second tenant.
func Demo(tenantID, tenantName string) DemoTenant {
	p := tenantID + "-"
	return DemoTenant{
		TenantID: tenantID, TenantName: tenantName,
		Project:  Project{ID: p + "dc-network-2026", Name: "Data centre network upgrade 2026", Budget: 1_200_000, Currency: "CNY"},
		Desc:     "Replace the core and access switching of the Shanghai data centre with a redundant spine-leaf fabric; delivery within 90 days, 24-month warranty minimum.",
		RulePack: DemoRulePack(),
		Suppliers: []DemoSupplier{
			{ID: p + "northwind", Name: "Northwind Networks", Expect: "pass", Documents: []DemoDocument{
				{ID: p + "northwind-technical", Title: "Technical proposal", Body: `# Technical proposal — Northwind Networks

## Architecture
We propose a redundant spine-leaf fabric: two spine switches and twelve leaf switches with dual-homed servers. Every link and power supply is redundant, so the loss of any single device causes no outage. The design delivers high availability with a guaranteed 99.99% uptime in the service level agreement.

## Disaster recovery
A disaster recovery site in Hangzhou is connected by two diverse 100G paths; configuration backups are replicated every hour and failover is rehearsed quarterly.

## Delivery
The project plan has four milestones: design sign-off (day 10), staging (day 25), cut-over (day 40) and acceptance (day 45). Full delivery within 45 calendar days of contract signature, with an on-site engineering team throughout.`},
				{ID: p + "northwind-commercial", Title: "Commercial offer", Body: `# Commercial offer

Total bid price: 1,080,000 CNY including hardware, licences, installation and training.

## Service and warranty
Warranty: 36 months on all hardware and software. We provide 24/7 support with a response time of 2 hours and on-site support within 4 hours in Shanghai. Spare parts are stocked locally.

## Qualifications
Northwind holds ISO 9001 and ISO 27001 certificates (copies attached). Reference projects: China Eastern Bank (2024) and Yangtze Logistics (2025); references available on request.`},
			}},
			{ID: p + "bluewater", Name: "Bluewater Systems", Expect: "review", Documents: []DemoDocument{
				{ID: p + "bluewater-proposal", Title: "Proposal", Body: `# Proposal — Bluewater Systems

Bluewater is pleased to submit its offer for the data centre network. Our engineers have long experience with enterprise networks and will work closely with your team to agree the details of the design after award.

We will supply modern switching equipment from a leading vendor. The final topology will be confirmed during the design phase, and a project plan will follow after award. Our engineers provide on-site support during office hours.

Total bid price: 990,000 CNY.

Delivery in 75 days after the order.

Warranty: 12 months standard, extendable at extra cost.`},
			}},
			{ID: p + "crestline", Name: "Crestline Technology", Expect: "disqualified", Documents: []DemoDocument{
				{ID: p + "crestline-tech", Title: "技术方案", Body: `# 技术方案 — 嘉岭科技

采用冗余的 spine-leaf 架构，两台核心交换机与十二台接入交换机，服务器双上联，实现高可用（high availability），承诺 99.95% uptime。

灾备方案：杭州异地灾备中心（disaster recovery），双路由互联。

实施计划（project plan）分三个里程碑（milestone）：设计、割接、验收，交货期 50 天，全程 on-site 驻场。`},
				{ID: p + "crestline-commercial", Title: "商务报价", Body: `# 商务报价

投标总价：人民币 135 万元（含设备、许可、实施与培训）。

质保期 36 个月，提供 24/7 技术支持，4 hours response，本地备件库（spare parts）。

资质：质量管理体系认证 ISO 9001、信息安全管理体系 ISO 27001；参考案例（reference）：华东某银行数据中心。`},
			}},
			// No bid documents: its evaluation fails (BID_NO_DOCUMENTS) into the dead-letter
			// queue, for an operator to act on (DemoHarborBid).
			{ID: p + "harbor", Name: "Harbor Systems", Expect: "dead_letter"},
		},
	}
}
