package contractreview

import (
	"slices"
	"strings"
	"testing"
)

// Each rule, in English and Chinese, for the party it hurts and not for the other.
func TestRules(t *testing.T) {
	t.Parallel()
	price := []Fact{{Key: FactContractPrice, Amount: 10e6, Currency: "USD", ClauseID: "1.1"}}
	cases := []struct {
		name, text, us string
		facts          []Fact
		checks         []string
		want           string // "rule@excerpt", or "" for no hit
	}{
		{"cap below price, capped Employer, for the Contractor", "The total liability of the Employer shall not exceed 10% of the Contract Price.", roleContractor, price, nil, "liability_cap@10% of the Contract Price"},
		{"the same cap, for the Employer", "The total liability of the Employer shall not exceed 10% of the Contract Price.", roleEmployer, price, nil, ""},
		{"cap at the price", "The liability of either Party shall not exceed 100% of the Contract Price.", roleContractor, price, nil, ""},
		{"fixed-sum cap below the price", "The Employer's liability is limited to USD 2,000,000.", roleContractor, price, nil, "liability_cap@USD 2,000,000"},
		{"fixed-sum cap above the price", "The Employer's liability is limited to USD 20 million.", roleContractor, price, nil, ""},
		{"our unlimited liability", "The Contractor's liability under this Contract shall be unlimited.", roleContractor, nil, nil, "liability_cap@unlimited"},
		{"no cap where the checklist needs one", "The Parties shall act in good faith.", roleContractor, nil, []string{RuleLiabilityCap}, "liability_cap@The Parties shall act in good faith."},
		{"Chinese cap", "发包人的赔偿责任总额不超过合同价格的5%。", roleContractor, nil, nil, "liability_cap@合同价格的5%"},
		{"Chinese unlimited", "承包人对发包人承担无限责任。", roleContractor, nil, nil, "liability_cap@无限责任"},
		{"our unlimited indemnity", "The Contractor shall indemnify the Employer against any and all claims.", roleContractor, nil, nil, "unlimited_indemnity@any and all"},
		{"a fault-based indemnity", "The Contractor shall indemnify the Employer against all claims to the extent caused by its negligence.", roleContractor, nil, nil, ""},
		{"their indemnity", "The Employer shall indemnify the Contractor against any and all claims.", roleContractor, nil, nil, ""},
		{"advance without guarantee, for the Employer", "The Employer shall pay an advance payment of 10% within 14 days.", roleEmployer, nil, nil, "advance_payment_guarantee@advance payment"},
		{"no guarantee required", "The Employer shall pay an advance payment of 10%. No advance payment guarantee is required.", roleEmployer, nil, nil, "advance_payment_guarantee@No advance payment guarantee"},
		{"advance explicitly unsecured", "The Contractor shall not be required to provide an advance payment guarantee.", roleEmployer, nil, nil, "advance_payment_guarantee@not be required to provide an advance payment guarantee"},
		{"advance with a guarantee", "The Employer shall pay an advance payment against an advance payment guarantee.", roleEmployer, nil, nil, ""},
		{"advance without guarantee, for the Contractor", "The Employer shall pay an advance payment of 10%.", roleContractor, nil, nil, ""},
		{"Chinese advance", "发包人应向承包人支付预付款，承包人无需提供预付款保函。", roleEmployer, nil, nil, "advance_payment_guarantee@无需提供预付款保函"},
		{"short claim notice", "The Contractor shall give notice of a claim within 14 days.", roleContractor, nil, nil, "claim_notice@within 14 days"},
		{"28-day claim notice", "The Contractor shall give notice of a claim within 28 days.", roleContractor, nil, nil, ""},
		{"their short claim notice", "The Employer shall give notice of a claim within 7 days.", roleContractor, nil, nil, ""},
		{"Chinese claim notice", "承包人应在索赔事件发生后14天内发出索赔意向通知书。", roleContractor, nil, nil, "claim_notice@14天内"},
		{"long payment", "The Employer shall pay the Contractor within 90 days after the Statement.", roleContractor, nil, nil, "payment_terms@within 90 days"},
		{"passive long payment", "Payment shall be made 120 days after receipt of the invoice.", roleContractor, nil, nil, "payment_terms@120 days after"},
		{"56-day payment", "The Employer shall pay the Contractor within 56 days.", roleContractor, nil, nil, ""},
		{"long payment, for the payer", "The Employer shall pay the Contractor within 90 days.", roleEmployer, nil, nil, ""},
		{"Chinese payment", "发包人应在收到申请后90天内支付进度款。", roleContractor, nil, nil, "payment_terms@90天内"},
		{"termination for convenience", "The Employer may terminate the Contract at any time for its convenience.", roleContractor, nil, nil, "termination_for_convenience@for its convenience"},
		{"compensated termination", "The Employer may terminate for its convenience and shall compensate the Contractor for loss of profit.", roleContractor, nil, nil, ""},
		{"our own termination right", "The Contractor may terminate the Contract for its convenience.", roleContractor, nil, nil, ""},
		{"Chinese termination", "发包人可随时解除本合同。", roleContractor, nil, nil, "termination_for_convenience@随时"},
		{"unknown party: every one-sided term", "The Employer may terminate the Contract for its convenience.", "", nil, nil, "termination_for_convenience@for its convenience"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			hits := runRules(ruleInput{clauseID: "x", text: tc.text, us: tc.us, facts: tc.facts, checks: tc.checks, zh: hanShare(tc.text) > 0.3})
			var got []string
			for _, h := range hits {
				got = append(got, h.rule+"@"+tc.text[h.span.Start:h.span.End])
			}
			want := []string{}
			if tc.want != "" {
				want = []string{tc.want}
			}
			if !slices.Equal(append([]string{}, got...), want) {
				t.Fatalf("hits = %v, want %v", got, want)
			}
			for _, h := range hits {
				if strings.TrimSpace(h.desc) == "" || h.severity == "" {
					t.Errorf("hit without a description or severity: %+v", h)
				}
			}
		})
	}
}

// Every rule's standard fix removes its risk and adds none (what
// clause_validate checks), in both languages.
func TestFixesPassValidation(t *testing.T) {
	t.Parallel()
	for _, d := range DemoContracts() {
		ds := ParseStructure("d", d.Text)
		zh := d.Language == "zh"
		for _, c := range ds.Clauses {
			text := c.Text(d.Text)
			in := ruleInput{clauseID: c.ID, text: text, us: roleOf(d.OurParty, nil), zh: zh}
			for _, h := range runRules(in) {
				r := RiskPoint{RiskID: "r", Rule: h.rule, Span: h.span}
				for variant := range 2 {
					f := fixFor(text, r, zh, variant, "")
					at := strings.Index(text, f.original)
					diff := DocumentDiff{DiffID: "d", RiskID: "r", Span: Span{at, at + len(f.original)}, Original: f.original, Suggested: f.suggested}
					if is, ok := checkDiff(in, text, diff, r); !ok {
						t.Errorf("%s %s (%s) variant %d: %q → %q fails: %+v", d.Filename, c.ID, h.rule, variant, f.original, f.suggested, is)
					}
				}
			}
		}
	}
}

func TestRoleOf(t *testing.T) {
	t.Parallel()
	facts := []Fact{{Key: "party:contractor", Value: "Meridian Engineering Ltd"}, {Key: "party:employer", Value: "上海滨江置业有限公司"}}
	cases := map[string]string{"Contractor": roleContractor, "承包商": roleContractor, "乙方": roleContractor, "the Employer": roleEmployer,
		"发包人": roleEmployer, "MERIDIAN ENGINEERING LTD.": roleContractor, "上海滨江置业有限公司": roleEmployer, "Acme": "", "": ""}
	for party, want := range cases {
		if got := roleOf(party, facts); got != want {
			t.Errorf("roleOf(%q) = %q, want %q", party, got, want)
		}
	}
}

func TestExtractFacts(t *testing.T) {
	t.Parallel()
	en := extractFacts("1.1", `"Contractor" means Meridian Engineering Ltd, and its legal successors.
"Contract Price" means USD 48,000,000, the agreed amount.
"Works" means the Permanent Works and the Temporary Works.`)
	zh := extractFacts("2", "发包人：上海滨江置业有限公司\n签约合同价为人民币壹亿贰仟万元（¥120,000,000元），为固定总价。")
	got := map[string]Fact{}
	for _, f := range append(en, zh...) {
		if _, dup := got[f.Key+f.ClauseID]; !dup {
			got[f.Key+f.ClauseID] = f
		}
	}
	if f := got["contract_price1.1"]; f.Amount != 48e6 || f.Currency != "USD" {
		t.Errorf("English price = %+v", f)
	}
	if f := got["contract_price2"]; f.Amount != 120e6 || f.Currency != "CNY" {
		t.Errorf("Chinese price = %+v", f)
	}
	if f := got["party:contractor1.1"]; f.Value != "Meridian Engineering Ltd" {
		t.Errorf("contractor = %+v", f)
	}
	if f := got["party:employer2"]; f.Value != "上海滨江置业有限公司" {
		t.Errorf("employer = %+v", f)
	}
	if f := got["term:Works1.1"]; !strings.HasPrefix(f.Value, "the Permanent Works") {
		t.Errorf("term Works = %+v", f)
	}
}

func TestSilverBookChecklist(t *testing.T) {
	t.Parallel()
	items, err := DomainChecklist(DomainFIDIC, SubtypeSilverBook)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{}
	for _, it := range items {
		names[it.ClauseID] = it.ClauseName
	}
	for id, want := range map[string]string{"4.1": "一般义务", "14.2": "预付款", "17.6": "责任限制", "20.1": "索赔"} {
		if names[id] != want {
			t.Errorf("silver book %s = %q, want %q", id, names[id], want)
		}
	}
	if _, err := DomainChecklist("fidic", "red_book"); err == nil {
		t.Error("an unknown subtype has a checklist")
	}
	ds := ParseStructure("d", DemoContracts()[1].Text)
	if g := GenericChecklist(&ds); len(g) != 9 || g[4].ClauseID != "14-1" || g[4].ClauseName != "逾期付款" {
		t.Errorf("generic checklist of the Chinese demo = %+v", g)
	}
}

func TestWordDiff(t *testing.T) {
	t.Parallel()
	cases := []struct{ a, b, want string }{
		{"within 14 days", "within 28 days", "within [-14-]{+28+} days"},
		{"at its sole discretion", "at its reasonable discretion", "at its [-sole-]{+reasonable+} discretion"},
		{"发包人可随时解除本合同。", "发包人可经协商解除本合同。", "发包人可[-随时-]{+经协商+}解除本合同。"},
		{"same", "same", "same"},
	}
	for _, tc := range cases {
		var b strings.Builder
		for _, s := range WordDiff(tc.a, tc.b) {
			switch s.Op {
			case OpDelete:
				b.WriteString("[-" + s.Text + "-]")
			case OpInsert:
				b.WriteString("{+" + s.Text + "+}")
			default:
				b.WriteString(s.Text)
			}
		}
		if b.String() != tc.want {
			t.Errorf("WordDiff(%q, %q) = %q, want %q", tc.a, tc.b, b.String(), tc.want)
		}
	}
}

func TestDiffIDStable(t *testing.T) {
	t.Parallel()
	a := DiffID("17.6", Span{10, 20}, "100% of the Contract Price")
	if a != DiffID("17.6", Span{10, 20}, "100% of the Contract Price") {
		t.Error("the same diff has two ids")
	}
	for _, other := range []string{DiffID("17.7", Span{10, 20}, "100% of the Contract Price"), DiffID("17.6", Span{11, 20}, "100% of the Contract Price"),
		DiffID("17.6", Span{10, 20}, "120% of the Contract Price")} {
		if other == a {
			t.Error("different diffs share an id")
		}
	}
}

// The offline provider's one-sided wordings are risks only for the party they
// disadvantage: the Employer's own "sole discretion" is no risk to the Employer.
func TestOfflineRisksForOurParty(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, text, us string
		want           []string // excerpts
	}{
		{"their discretion", "The Employer may instruct changes to the design at its sole discretion.", roleContractor, []string{"sole discretion"}},
		{"our discretion", "The Employer may instruct changes to the design at its sole discretion.", roleEmployer, nil},
		{"discretion, party unknown", "The Employer may instruct changes to the design at its sole discretion.", "", []string{"sole discretion"}},
		{"their entry without notice", "The Employer may enter the Site without notice.", roleEmployer, nil},
		{"entry without notice, for the Contractor", "The Employer may enter the Site without notice.", roleContractor, []string{"without notice"}},
		{"our waiver", "The Contractor waives all claims for delay.", roleContractor, []string{"waives all claims"}},
		{"their waiver", "The Contractor waives all claims for delay.", roleEmployer, nil},
		{"we may not object", "发包人可随时解除本合同，承包人不得提出任何异议。", roleContractor, []string{"不得提出任何异议"}},
		{"they may not object", "发包人可随时解除本合同，承包人不得提出任何异议。", roleEmployer, nil},
		{"either party decides", "Either Party may decide at its sole discretion.", roleEmployer, []string{"sole discretion"}},
	}
	for _, c := range cases {
		out, err := riskTask.Offline(t.Context(), riskIn{ClauseID: "1", Text: c.text, OurParty: c.us, OurRole: c.us, Language: "en"})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range out.Risks {
			got = append(got, r.Excerpt)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: risks %q, want %q", c.name, got, c.want)
		}
	}
}

// The change for an advance without a guarantee keeps the payment: it replaces
// only the words that waive the guarantee, not the sentence that also pays.
func TestAdvanceGuaranteeFixKeepsThePayment(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, text string
		zh         bool
		want       string // the clause after the change
	}{
		{"Chinese, one sentence", "发包人应在开工日期前7天内向承包人支付合同价款的10%作为预付款，承包人无需提供预付款保函。", true,
			"发包人应在开工日期前7天内向承包人支付合同价款的10%作为预付款，承包人应在预付款支付前提交与预付款等额、由发包人认可的银行出具的预付款保函。"},
		{"English, after a comma", "The Employer shall pay an advance payment of 10% within 14 days, and no advance payment guarantee is required.", false,
			"The Employer shall pay an advance payment of 10% within 14 days, provided that the Contractor first provides an advance payment guarantee in the same amount, issued by a bank acceptable to the Employer."},
		{"English, without", "The Employer shall pay an advance payment of 10% within 14 days without an advance payment guarantee.", false,
			"The Employer shall pay an advance payment of 10% within 14 days against an advance payment guarantee in the same amount, issued by a bank acceptable to the Employer."},
		{"English, a sentence of its own", "The Employer shall pay an advance payment of 10%. No advance payment guarantee is required.", false,
			"The Employer shall pay an advance payment of 10%. The Contractor shall provide an advance payment guarantee, in the amount of the advance payment and issued by a bank acceptable to the Employer, before the advance payment is made."},
	}
	for _, c := range cases {
		in := ruleInput{clauseID: "3", text: c.text, us: roleEmployer, zh: c.zh}
		hits := runRules(in)
		if len(hits) != 1 || hits[0].rule != RuleAdvanceGuarantee {
			t.Fatalf("%s: hits %+v", c.name, hits)
		}
		r := RiskPoint{RiskID: "r", Rule: hits[0].rule, Span: hits[0].span}
		f := fixFor(c.text, r, c.zh, 0, "")
		at := strings.Index(c.text, f.original)
		if got := c.text[:at] + f.suggested + c.text[at+len(f.original):]; got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
		diff := DocumentDiff{DiffID: "d", RiskID: "r", Span: Span{at, at + len(f.original)}, Original: f.original, Suggested: f.suggested}
		if is, ok := checkDiff(in, c.text, diff, r); !ok {
			t.Errorf("%s: the change fails validation: %+v", c.name, is)
		}
	}
}

// Periods as contracts write them: in words and figures, "not later than", and
// Chinese numerals; the change replaces the whole number, words and figures.
func TestDayWordings(t *testing.T) {
	t.Parallel()
	cases := []struct {
		text, want, fixed string // want "rule@excerpt" or ""; fixed the excerpt after the change
	}{
		{"The Employer shall pay the Contractor within ninety (90) days of receipt of the invoice.", "payment_terms@within ninety (90) days", "within 56 days"},
		{"The Employer shall pay the Contractor within 90 (ninety) days of receipt of the invoice.", "payment_terms@within 90 (ninety) days", "within 56 days"},
		{"The Employer shall pay the Contractor within forty-five (45) days of receipt of the invoice.", "", ""},
		{"The Contractor shall give notice of a claim not later than 21 days after becoming aware of the event.", "claim_notice@not later than 21 days", "not later than 28 days"},
		{"The Contractor shall give notice of a claim not later than 28 days after becoming aware of the event.", "", ""},
		{"The Contractor shall give notice of a claim within fourteen (14) days.", "claim_notice@within fourteen (14) days", "within 28 days"},
		{"发包人应在收到承包人付款申请后六十日内付款。", "payment_terms@六十日内", "56日内"},
		{"承包人应在索赔事件发生后二十天内发出索赔通知。", "claim_notice@二十天内", "28天内"},
		{"承包人应在索赔事件发生后二十八天内发出索赔通知。", "", ""},
		{"发包人应在收到付款申请后一百二十日内付款。", "payment_terms@一百二十日内", "56日内"},
	}
	for _, c := range cases {
		in := ruleInput{clauseID: "x", text: c.text, us: roleContractor, zh: isChinese("", c.text)}
		var got string
		hits := runRules(in)
		for _, h := range hits {
			got = h.rule + "@" + c.text[h.span.Start:h.span.End]
		}
		if len(hits) > 1 || got != c.want {
			t.Errorf("%q: hits %d, last %q, want %q", c.text, len(hits), got, c.want)
			continue
		}
		if c.want == "" {
			continue
		}
		r := RiskPoint{RiskID: "r", Rule: hits[0].rule, Span: hits[0].span}
		f := fixFor(c.text, r, in.zh, 0, "")
		if f.suggested != c.fixed {
			t.Errorf("%q: change %q → %q, want → %q", c.text, f.original, f.suggested, c.fixed)
		}
		at := strings.Index(c.text, f.original)
		diff := DocumentDiff{DiffID: "d", RiskID: "r", Span: Span{at, at + len(f.original)}, Original: f.original, Suggested: f.suggested}
		if is, ok := checkDiff(in, c.text, diff, r); !ok {
			t.Errorf("%q: the change fails validation: %+v", c.text, is)
		}
	}
}

// Parties named where an English contract opens resolve our party given by its name.
func TestPreamblePartiesEN(t *testing.T) {
	t.Parallel()
	text := "THIS AGREEMENT is made between Acme Power Ltd, a company registered in England (the \"Employer\") and BuildCo Ltd (the \"Contractor\").\n\n1 General\nThe Works are described in the Schedule.\n"
	ds := ParseStructure("d", text)
	facts := preambleParties(text, &ds)
	for party, want := range map[string]string{"Acme Power Ltd": roleEmployer, "BuildCo Ltd": roleContractor, "buildco ltd.": roleContractor, "Other Co": ""} {
		if got := roleOf(party, facts); got != want {
			t.Errorf("roleOf(%q) = %q, want %q (facts %+v)", party, got, want, facts)
		}
	}
}
