package contractreview

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
)

// The rules clause_analyze applies to every clause. Each finds a term that
// disadvantages one party and reports it when that party is ours (or when
// either is unknown).
const (
	RuleLiabilityCap       = "liability_cap"               // a cap below the contract price, or none on us
	RuleUnlimitedIndemnity = "unlimited_indemnity"         // we indemnify against everything, without limit
	RuleAdvanceGuarantee   = "advance_payment_guarantee"   // an advance payment with no guarantee
	RuleClaimNotice        = "claim_notice"                // a claim notice period under 28 days
	RulePaymentTerms       = "payment_terms"               // payment later than 56 days
	RuleTermination        = "termination_for_convenience" // the other party may walk away at will
	RuleMissingClause      = "missing_clause"              // the checklist's clause is not in the contract
	RuleModel              = "model"                       // found by the provider
)

// Rules lists the six clause rules, in the order they run.
var Rules = []string{RuleLiabilityCap, RuleUnlimitedIndemnity, RuleAdvanceGuarantee, RuleClaimNotice, RulePaymentTerms, RuleTermination}

// Thresholds of the rules.
const (
	MinClaimNoticeDays = 28
	MaxPaymentDays     = 56
)

// ruleInput is what the rules read: the clause, our role and the facts
// known so far (from the scratchpad and the clause itself).
type ruleInput struct {
	clauseID, text string
	us             string // our role
	facts          []Fact
	checks         []string
	zh             bool
}

// ruleHit is one finding of a rule.
type ruleHit struct {
	rule, severity, desc string
	span                 *Span
	uses                 []string
	victim               string // the disadvantaged role
}

var (
	reLiability   = regexp.MustCompile(`(?i)liabilit|责任|赔偿`)
	reCapPhrase   = regexp.MustCompile(`(?i)shall\s+not\s+(?:in\s+aggregate\s+)?exceed|not\s+to\s+exceed|(?:be\s+)?limited\s+to|capped\s+at|up\s+to\s+a\s+maximum\s+of|不得超过|不应超过|最高不超过|不超过|上限为|以[^。，；]{0,24}为限`)
	reCapPercent  = regexp.MustCompile(`(?i)(\d+(?:\.\d+)?)\s*(?:%|per\s?cent)\s+of\s+the\s+(?:Contract\s+Price|Accepted\s+Contract\s+Amount|Contract\s+Sum)|(?:签约合同价|合同(?:价格|总价|价款|总额|金额))的?\s*(\d+(?:\.\d+)?)\s*%`)
	reCapAmount   = regexp.MustCompile(`(?i)(?:USD|US\$|EUR|GBP|RMB|CNY|\$|€|£|¥)\s?\d[\d,]*(?:\.\d+)?(?:\s*million)?|[¥￥]?\d[\d,]*(?:\.\d+)?\s*(?:万元|元)`)
	reUnlimited   = regexp.MustCompile(`(?i)\bunlimited\b|\bwithout\s+(?:any\s+)?limit(?:ation)?\b|无限(?:连带)?责任|不设(?:上限|限额)|不受(?:任何)?(?:金额)?限制`)
	reIndemnify   = regexp.MustCompile(`(?i)\bindemnif|\bhold\s+(?:\w+\s+){0,3}harmless|保障.{0,12}免受|使.{0,12}免受|赔偿.{0,12}一切`)
	reBroadScope  = regexp.MustCompile(`(?i)\bany\s+and\s+all\b|\ball\s+(?:claims|losses|damages|liabilities)|\bwhatsoever\b|\bhowsoever\b|一切|任何(?:索赔|损失|责任)|全部(?:损失|责任)`)
	reLimiter     = regexp.MustCompile(`(?i)to\s+the\s+extent|caused\s+by|attributable\s+to|subject\s+to\s+(?:Sub-)?Clause|limits?\s+of\s+liability|not\s+exceed|因.{0,15}(?:过错|违约|原因)造成|以.{0,20}为限|责任限额`)
	reAdvance     = regexp.MustCompile(`(?i)advance\s+payment|预付款`)
	reAdvancePaid = regexp.MustCompile(`(?i)\b(?:shall|will)\s+(?:make|pay)|\bis\s+payable|\bshall\s+be\s+paid|支付|拨付`)
	reGuarantee   = regexp.MustCompile(`(?i)guarantee|\bsecurity\b|\bbond\b|保函|担保`)
	reNoGuarantee = regexp.MustCompile(`(?i)(?:without|\bno|not\s+(?:be\s+)?(?:required|obliged)\s+to\s+(?:provide|submit|furnish|deliver))\s+(?:an?\s+|any\s+)?(?:advance\s+payment\s+)?(?:guarantee|security|bond)|无需(?:提供|提交)?.{0,6}(?:保函|担保)|不(?:需|要求|必)(?:提供|提交).{0,6}(?:保函|担保)`)
	reClaim       = regexp.MustCompile(`(?i)\bclaim|索赔`)
	reNotice      = regexp.MustCompile(`(?i)\bnotice|\bnotif|通知|意向`)
	reDays        = regexp.MustCompile(`(?i)\b(?:within|(?:not|no)\s+later\s+than)\s+(?:[a-z]+(?:-[a-z]+)?\s*\((\d{1,3})\)|(\d{1,3})\s*(?:\([\w-]+\)\s*)?)\s*(?:calendar\s+|working\s+|business\s+)?days?\b|(\d{1,3}|[零〇一二两三四五六七八九十百]{1,6})\s*(?:天|日|个工作日)(?:内|之内)`)
	reLateDays    = regexp.MustCompile(`(?i)\b(\d{1,3})\s*(?:calendar\s+)?days\s+(?:after|from|of|following)\b`)
	reTimeBar     = regexp.MustCompile(`(?i)shall\s+not\s+be\s+entitled|\blose\b|\bforfeit|deemed\s+to\s+have\s+waived|time[- ]barred|丧失|视为放弃|不予受理|不得再`)
	rePay         = regexp.MustCompile(`(?i)\bshall\s+(?:be\s+)?pa(?:y|id)\b|\bpayment\s+shall\s+be\s+made\b|\b(?:is|are)\s+payable\b|\bshall\s+make\s+(?:the\s+)?payment|(?:应|须|应当|应在|应于).{0,24}(?:支付|付款|付清)`)
	reTerminate   = regexp.MustCompile(`(?i)\bterminat|解除|终止`)
	reAtWill      = regexp.MustCompile(`(?i)for\s+(?:its\s+|their\s+|the\s+\w+['’]s\s+)?(?:own\s+)?convenience|at\s+any\s+time\s+(?:and\s+)?(?:without\s+cause|for\s+any\s+reason)|without\s+(?:cause|reason)|for\s+any\s+reason|at\s+its\s+(?:sole\s+|absolute\s+)?discretion|随时|任意|无需(?:任何)?理由|无理由|为便利`)
	reCompensate  = regexp.MustCompile(`(?i)loss\s+of\s+profit|compensat|reimburs|赔偿.{0,16}损失|补偿|预期利润`)
)

// runRules applies the six rules to a clause.
func runRules(in ruleInput) []ruleHit {
	var hits []ruleHit
	for _, s := range sentences(in.text) {
		hits = append(hits, liabilityCap(in, s)...)
		hits = append(hits, unlimitedIndemnity(in, s)...)
		hits = append(hits, claimNotice(in, s)...)
		hits = append(hits, paymentTerms(in, s)...)
		hits = append(hits, termination(in, s)...)
	}
	hits = append(hits, advanceGuarantee(in)...)
	hits = append(hits, missingCap(in, hits)...)
	return hits
}

func (in ruleInput) say(en, zh string, args ...any) string {
	if in.zh {
		return fmt.Sprintf(zh, args...)
	}
	return fmt.Sprintf(en, args...)
}

func spanOf(s sentence, loc []int) *Span {
	return &Span{Start: s.start + loc[0], End: s.start + loc[1]}
}

func liabilityCap(in ruleInput, s sentence) []ruleHit {
	seg := in.text[s.start:s.end]
	if !reLiability.MatchString(seg) {
		return nil
	}
	var hits []ruleHit
	if loc := reUnlimited.FindStringIndex(seg); loc != nil {
		liable := partyIn(seg, 0, loc[0])
		if hurts(liable, in.us) {
			hits = append(hits, ruleHit{rule: RuleLiabilityCap, severity: SeverityCritical, span: spanOf(s, loc), victim: liable,
				desc: in.say("The liability of %s is unlimited: no cap on its exposure.", "%s的责任不设上限，风险敞口无限。", partyRef(liable, in.zh))})
		}
	}
	capAt := reCapPhrase.FindStringIndex(seg)
	if capAt == nil {
		return hits
	}
	capped := partyIn(seg, 0, capAt[0])
	victim := other(capped)
	if !hurts(victim, in.us) {
		return hits
	}
	price, havePrice := factOf(in.facts, FactContractPrice)
	uses := func() []string {
		if havePrice {
			return []string{price.ClauseID + ":" + FactContractPrice}
		}
		return nil
	}
	if m := reCapPercent.FindStringSubmatchIndex(seg[capAt[0]:]); m != nil && m[0] < 120 {
		num := group(seg[capAt[0]:], m, 1, 2)
		p, _ := strconv.ParseFloat(num, 64)
		if p >= 100 {
			return hits
		}
		loc := []int{capAt[0] + m[0], capAt[0] + m[1]}
		worth := ""
		if havePrice {
			amount := money{price.Amount * p / 100, price.Currency}
			worth = in.say(" = %s, with the Contract Price of %s stated in %s", "，即 %s（合同价格 %s，见第 %s 条）", amount, money{price.Amount, price.Currency}, price.ClauseID)
		}
		return append(hits, ruleHit{rule: RuleLiabilityCap, severity: SeverityHigh, span: spanOf(s, loc), victim: victim, uses: uses(),
			desc: in.say("The liability of %s is capped at %s of the Contract Price%s: below the contract price, so losses above it are not recovered.",
				"%s的责任上限为合同价格的 %s%s，低于合同价格，超出部分的损失无法获赔。", partyRef(capped, in.zh), pct(p), worth)})
	}
	if loc := reCapAmount.FindStringIndex(seg[capAt[0]:]); loc != nil && loc[0] < 120 {
		loc = []int{capAt[0] + loc[0], capAt[0] + loc[1]}
		amount, ok := parseMoney(seg[loc[0]:loc[1]])
		if !ok {
			return hits
		}
		switch {
		case !havePrice:
			return append(hits, ruleHit{rule: RuleLiabilityCap, severity: SeverityMedium, span: spanOf(s, loc), victim: victim,
				desc: in.say("The liability of %s is capped at %s; the Contract Price is not known, so check the cap against it.",
					"%s的责任上限为 %s；未找到合同价格，请核对该上限是否低于合同价格。", partyRef(capped, in.zh), amount)})
		case amount.currency == price.Currency && amount.amount < price.Amount:
			return append(hits, ruleHit{rule: RuleLiabilityCap, severity: SeverityHigh, span: spanOf(s, loc), victim: victim, uses: uses(),
				desc: in.say("The liability of %s is capped at %s, %s of the Contract Price of %s stated in %s: below the contract price.",
					"%s的责任上限为 %s，仅为合同价格 %s（见第 %s 条）的 %s，低于合同价格。", partyRef(capped, in.zh), amount,
					pct(float64(int(amount.amount/price.Amount*1000))/10), money{price.Amount, price.Currency}, price.ClauseID)})
		}
	}
	return hits
}

// missingCap: a clause the checklist says must cap liability, with no cap.
func missingCap(in ruleInput, found []ruleHit) []ruleHit {
	if !slices.Contains(in.checks, RuleLiabilityCap) || reCapPhrase.MatchString(in.text) && reCapPercentOrAmount(in.text) {
		return nil
	}
	for _, h := range found {
		if h.rule == RuleLiabilityCap {
			return nil
		}
	}
	ss := sentences(in.text)
	if len(ss) == 0 {
		return nil
	}
	last := ss[len(ss)-1]
	return []ruleHit{{rule: RuleLiabilityCap, severity: SeverityHigh, span: &Span{last.start, last.end},
		desc: in.say("No cap on liability is stated in this clause.", "本条未约定责任上限。")}}
}

func reCapPercentOrAmount(text string) bool {
	return reCapPercent.MatchString(text) || reCapAmount.MatchString(text)
}

func unlimitedIndemnity(in ruleInput, s sentence) []ruleHit {
	seg := in.text[s.start:s.end]
	ind := reIndemnify.FindStringIndex(seg)
	if ind == nil || reLimiter.MatchString(seg) {
		return nil
	}
	scope := reBroadScope.FindStringIndex(seg)
	if scope == nil {
		return nil
	}
	indemnifier := partyIn(seg, 0, ind[0])
	if !hurts(indemnifier, in.us) {
		return nil
	}
	return []ruleHit{{rule: RuleUnlimitedIndemnity, severity: SeverityHigh, span: spanOf(s, scope), victim: indemnifier,
		desc: in.say("%s indemnifies against %s, with no link to its fault and no limit.", "%s须就%s承担赔偿责任，既不以其过错为前提，也无上限。",
			capitalize(partyRef(indemnifier, in.zh)), quote(seg[scope[0]:scope[1]]))}}
}

func advanceGuarantee(in ruleInput) []ruleHit {
	if !reAdvance.MatchString(in.text) {
		return nil
	}
	if !hurts(roleEmployer, in.us) { // the payer of an advance carries the risk
		return nil
	}
	desc := in.say("An advance payment is made without an advance payment guarantee: if the Contractor fails, the advance is not secured.",
		"预付款的支付未以预付款保函为条件，承包人违约时预付款无担保。")
	if loc := reNoGuarantee.FindStringIndex(in.text); loc != nil {
		return []ruleHit{{rule: RuleAdvanceGuarantee, severity: SeverityHigh, span: &Span{loc[0], loc[1]}, victim: roleEmployer, desc: desc}}
	}
	if reGuarantee.MatchString(in.text) {
		return nil
	}
	for _, s := range sentences(in.text) {
		seg := in.text[s.start:s.end]
		if loc := reAdvance.FindStringIndex(seg); loc != nil && reAdvancePaid.MatchString(seg) {
			return []ruleHit{{rule: RuleAdvanceGuarantee, severity: SeverityHigh, span: spanOf(s, loc), victim: roleEmployer, desc: desc}}
		}
	}
	return nil
}

// group is the first of the submatches i, j… that matched.
func group(s string, m []int, groups ...int) string {
	for _, g := range groups {
		if m[2*g] >= 0 {
			return s[m[2*g]:m[2*g+1]]
		}
	}
	return ""
}

// days finds "within N days" / "N天内" in a sentence.
func days(seg string) (n int, loc []int, ok bool) {
	m := reDays.FindStringSubmatchIndex(seg)
	if m == nil {
		return 0, nil, false
	}
	num := group(seg, m, 1, 2, 3)
	if n, ok := chineseNumber(num); ok {
		return n, m[:2], true
	}
	n, err := strconv.Atoi(num)
	return n, m[:2], err == nil
}

// chineseNumber reads a number written in Chinese numerals (六十, 二十八, 一百二十).
func chineseNumber(s string) (int, bool) {
	digits := map[rune]int{'零': 0, '〇': 0, '一': 1, '二': 2, '两': 2, '三': 3, '四': 4, '五': 5, '六': 6, '七': 7, '八': 8, '九': 9}
	total, cur, any := 0, 0, false
	for _, r := range s {
		if d, ok := digits[r]; ok {
			cur, any = d, true
			continue
		}
		switch r {
		case '十', '百':
			if cur == 0 {
				cur = 1
			}
			if r == '十' {
				total += cur * 10
			} else {
				total += cur * 100
			}
			cur, any = 0, true
		default:
			return 0, false
		}
	}
	return total + cur, any
}

func claimNotice(in ruleInput, s sentence) []ruleHit {
	seg := in.text[s.start:s.end]
	if !reClaim.MatchString(seg) || !reNotice.MatchString(seg) {
		return nil
	}
	n, loc, ok := days(seg)
	if !ok || n >= MinClaimNoticeDays {
		return nil
	}
	claimant := partyIn(seg, 0, loc[0])
	if !hurts(claimant, in.us) {
		return nil
	}
	sev := SeverityHigh
	if reTimeBar.MatchString(in.text) {
		sev = SeverityCritical
	}
	return []ruleHit{{rule: RuleClaimNotice, severity: sev, span: spanOf(s, loc), victim: claimant,
		desc: in.say("A claim must be notified within %d days, shorter than the %d days of FIDIC; a late notice may lose the claim.",
			"索赔通知期限为 %d 天，短于 FIDIC 的 %d 天，逾期可能丧失索赔权利。", n, MinClaimNoticeDays)}}
}

func paymentTerms(in ruleInput, s sentence) []ruleHit {
	seg := in.text[s.start:s.end]
	pay := rePay.FindStringIndex(seg)
	if pay == nil || reClaim.MatchString(seg) {
		return nil
	}
	n, loc, ok := days(seg)
	if !ok {
		m := reLateDays.FindStringSubmatchIndex(seg)
		if m == nil {
			return nil
		}
		n, _ = strconv.Atoi(seg[m[2]:m[3]])
		loc, ok = m[:2], true
	}
	if n <= MaxPaymentDays {
		return nil
	}
	payer := partyIn(seg, 0, pay[0])
	if payer == "" {
		payer = roleEmployer // "payment shall be made within 90 days": the Employer pays
	}
	payee := other(payer)
	if !hurts(payee, in.us) {
		return nil
	}
	return []ruleHit{{rule: RulePaymentTerms, severity: SeverityHigh, span: spanOf(s, loc), victim: payee,
		desc: in.say("Payment is due only after %d days, longer than %d days: it finances the other party.",
			"付款期限为 %d 天，超过 %d 天，相当于为对方垫资。", n, MaxPaymentDays)}}
}

func termination(in ruleInput, s sentence) []ruleHit {
	seg := in.text[s.start:s.end]
	term := reTerminate.FindStringIndex(seg)
	if term == nil || reCompensate.MatchString(seg) {
		return nil
	}
	will := reAtWill.FindStringIndex(seg)
	if will == nil {
		return nil
	}
	who := partyIn(seg, 0, min(term[0], will[0]))
	victim := other(who)
	if !hurts(victim, in.us) {
		return nil
	}
	return []ruleHit{{rule: RuleTermination, severity: SeverityHigh, span: spanOf(s, will), victim: victim,
		desc: in.say("%s may terminate at will (%s) without compensating %s for lost profit.",
			"%s可任意解除合同（%s），且无需赔偿%s的预期利润损失。", capitalize(partyRef(who, in.zh)), quote(seg[will[0]:will[1]]), partyRef(victim, in.zh))}}
}

// ruleCounts counts hits per rule.
func ruleCounts(hits []ruleHit) map[string]int {
	out := map[string]int{}
	for _, h := range hits {
		out[h.rule]++
	}
	return out
}

// isRule reports whether name is one of the six clause rules.
func isRule(name string) bool { return slices.Contains(Rules, name) }
