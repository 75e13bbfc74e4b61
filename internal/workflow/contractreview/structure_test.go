package contractreview

import (
	"fmt"
	"strings"
	"testing"
)

// outline prints a structure as "id|parent|level|title" lines, for comparison.
func outline(ds DocumentStructure) []string {
	out := make([]string, len(ds.Clauses))
	for i, c := range ds.Clauses {
		out[i] = fmt.Sprintf("%s|%s|%d|%s", c.ID, c.Parent, c.Level, c.Title)
	}
	return out
}

func TestParseStructure(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, text string
		want       []string
		style      string
		// bodies: clause id → a text its body must contain (and the next clause's must not)
		bodies map[string]string
	}{
		{
			name: "FIDIC numbering with numbers inside sentences",
			text: `CONDITIONS OF CONTRACT

1 General Provisions
1.1 Definitions
The "Contract Price" means USD 12,500,000, subject to adjustment under Sub-Clause
14.2 of the Conditions as applicable.
4.1 Contractor's General Obligations
The Contractor shall give notice within 28 days after the event, and
28 days after the notice the Employer shall respond.
Sub-Clause 14.2 Advance Payment
The Employer shall pay an advance payment of 10%.
  Clause 20.1   Contractor's Claims
   The Contractor shall give notice within 14 days.
Clause 17.6 of the General Conditions is deleted.
`,
			want:   []string{"1||1|General Provisions", "1.1|1|2|Definitions", "4.1||2|Contractor's General Obligations", "14.2||2|Advance Payment", "20.1||2|Contractor's Claims"},
			style:  "fidic",
			bodies: map[string]string{"1.1": "14.2 of the Conditions", "4.1": "28 days after the notice", "20.1": "Clause 17.6 of the General Conditions is deleted."},
		},
		{
			name: "title and body on one line",
			text: `17.6 Limitation of Liability. The total liability of the Contractor shall not exceed 10% of the Contract Price.
17.7 The Contractor shall insure the Works. Insurance is at its cost.
18 Insurance: as stated in the Particular Conditions.
`,
			want:   []string{"17.6||2|Limitation of Liability", "17.7||2|", "18||1|Insurance"},
			style:  "fidic",
			bodies: map[string]string{"17.6": "The total liability", "17.7": "The Contractor shall insure the Works.", "18": "as stated"},
		},
		{
			name: "articles with sub-clauses and roman numerals",
			text: `ARTICLE I - DEFINITIONS
Terms used here have the meanings in Article 5 below.
Article 5 of the Agreement prevails over the Conditions.
ARTICLE II - PAYMENT
2.1 Invoices. The Employer shall pay within 90 days.
2.2 Interest
Late payments bear interest.
Article 3: Termination
The Employer may terminate for convenience.
`,
			want:   []string{"1||1|DEFINITIONS", "2||1|PAYMENT", "2.1|2|2|Invoices", "2.2|2|2|Interest", "3||1|Termination"},
			style:  "article",
			bodies: map[string]string{"1": "Article 5 of the Agreement prevails", "2.1": "within 90 days", "3": "for convenience"},
		},
		{
			name: "Chinese articles, 之一 and items",
			text: `建设工程施工合同

第一条 工程概况
（一）工程名称：滨江大厦。
（二）工程地点：上海市浦东新区。
第十四条 工程款支付
发包人应在收到付款申请后56天内支付，逾期付款按
第十四条之一处理。
第十四条规定的期限届满后，承包人可以暂停施工。
（一）进度款每月支付一次。
第十四条之一 逾期付款
（一）发包人逾期付款的，应按日支付万分之五的违约金。
（二）逾期超过28天的，承包人有权解除合同。
第二十条　索赔
承包人应在知道索赔事件后28天内发出索赔通知。
第二十一条 争议解决
争议提交上海仲裁委员会仲裁。
第22条 其他
本合同一式八份。
`,
			want: []string{"1||1|工程概况", "1(1)|1|2|工程名称", "1(2)|1|2|工程地点", "14||1|工程款支付", "14(1)|14|2|", "14-1||1|逾期付款",
				"14-1(1)|14-1|2|", "14-1(2)|14-1|2|", "20||1|索赔", "21||1|争议解决", "22||1|其他"},
			style:  "chinese",
			bodies: map[string]string{"14": "第十四条规定的期限届满后", "14-1(2)": "逾期超过28天", "20": "28天内发出索赔通知"},
		},
		{
			name: "Chinese sections with items",
			text: `一、工程概况
（一）工程名称：滨江大厦
（二）资金来源：自筹
二、合同工期
计划开工日期：2026年3月1日。
三、签约合同价
签约合同价为人民币壹亿元（¥100,000,000元）。
`,
			want:   []string{"1||1|工程概况", "1(1)|1|2|工程名称", "1(2)|1|2|资金来源", "2||1|合同工期", "3||1|签约合同价"},
			style:  "chinese",
			bodies: map[string]string{"1(1)": "滨江大厦", "3": "¥100,000,000"},
		},
		{
			name: "a text without numbering",
			text: "This letter confirms the order.\nIt has no clauses.\n",
			want: []string{}, style: "none",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ds := ParseStructure("doc", tc.text)
			got := outline(ds)
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Fatalf("outline:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			if ds.Style != tc.style {
				t.Errorf("style = %q, want %q", ds.Style, tc.style)
			}
			for id, want := range tc.bodies {
				c, ok := ds.Find(id)
				if !ok {
					t.Fatalf("no clause %s", id)
				}
				if body := c.Text(tc.text); !strings.Contains(body, want) {
					t.Errorf("clause %s text %q lacks %q", id, body, want)
				}
			}
			for _, c := range ds.Clauses {
				if !(c.HeadingStart <= c.BodyStart && c.BodyStart <= c.BodyEnd && c.BodyEnd <= c.End && c.End <= len(tc.text)) {
					t.Errorf("clause %s offsets out of order: %+v", c.ID, c)
				}
			}
		})
	}
}

// A table of contents at the top, with or without page numbers, is skipped: the
// clauses are those of the contract proper, with their bodies.
func TestParseStructureSkipsContents(t *testing.T) {
	t.Parallel()
	body := `1 General Provisions
1.1 Definitions
"Contract Price" means USD 10,000,000.
14 Contract Price and Payment
14.7 Payment
The Employer shall pay within 90 days. See Sub-Clause 1.1 and Clause 14.
14.8 Delayed Payment
Interest applies under 14.7 of these Conditions.
`
	want := []string{"1||1|General Provisions", "1.1|1|2|Definitions", "14||1|Contract Price and Payment", "14.7|14|2|Payment", "14.8|14|2|Delayed Payment"}
	for name, toc := range map[string]string{
		"plain":        "CONTENTS\n1 General Provisions\n14 Contract Price and Payment\n\n",
		"page numbers": "Table of Contents\n1 General Provisions ........ 3\n1.1 Definitions ........ 3\n14 Contract Price and Payment ........ 7\n\n",
	} {
		text := toc + body
		ds := ParseStructure("d", text)
		if got := outline(ds); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s:\n got %q\nwant %q", name, got, want)
			continue
		}
		if c, _ := ds.Find("14.7"); c.Text(text) != "The Employer shall pay within 90 days. See Sub-Clause 1.1 and Clause 14." {
			t.Errorf("%s: 14.7 = %q", name, c.Text(text))
		}
	}
	// A contract whose first heading comes again later, after clauses with bodies, is no table of contents.
	text := "1 Definitions\nThe words have these meanings.\n2 Works\nThe Works are described below.\n1 Definitions\n"
	if got := outline(ParseStructure("d", text)); len(got) != 2 || got[0] != "1||1|Definitions" {
		t.Errorf("no contents: %q", got)
	}
}
