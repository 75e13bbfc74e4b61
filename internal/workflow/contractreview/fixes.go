package contractreview

import (
	"regexp"
	"strings"
)

// fix is a proposed replacement of clause words: sentence is true when the
// change rewrites a whole sentence (so it cannot be widened further).
type fix struct {
	original, suggested string
	sentence            bool
}

// fixFor drafts the change that answers a risk, the way the offline
// provider does: variant 0 is the standard fix, variant 1 the alternative
// offered after a rejection; override is a number the reviewer asked for
// ("make it 42 days").
func fixFor(text string, r RiskPoint, zh bool, variant int, override string) fix {
	excerpt := text[r.Span.Start:r.Span.End]
	s := sentenceAt(text, r.Span.Start)
	sent := text[s.start:s.end]
	phraseFix := func(suggested string) fix { return fix{original: excerpt, suggested: suggested} }
	pick := func(std, alt string) string {
		switch {
		case override != "":
			return override
		case variant > 0:
			return alt
		}
		return std
	}
	switch r.Rule {
	case RuleClaimNotice:
		return phraseFix(replaceNumber(excerpt, pick("28", "42")))
	case RulePaymentTerms:
		return phraseFix(replaceNumber(excerpt, pick("56", "30")))
	case RuleLiabilityCap:
		return capFix(excerpt, sent, zh, pick("100", "120"))
	case RuleUnlimitedIndemnity:
		who := partyRef(partyIn(sent, 0, len(sent)), zh)
		if variant > 0 {
			return appendFix(sent, zh, ", to the extent caused by the negligence or breach of contract of "+who+", and subject to the limits of liability in the Contract",
				"，但以因"+who+"的过错或违约造成的为限，并受合同约定的责任限额约束")
		}
		return appendFix(sent, zh, ", to the extent caused by the negligence, breach of contract or wilful default of "+who+", and subject to the limits of liability in the Contract",
			"，但以因"+who+"的过错、违约或故意行为造成的为限，并受合同约定的责任限额约束")
	case RuleAdvanceGuarantee:
		issuer := pick("a bank acceptable to the Employer", "a bank or a parent company acceptable to the Employer")
		zhIssuer := pick("发包人认可的银行", "发包人认可的银行或母公司")
		if reNoGuarantee.MatchString(excerpt) {
			// Only the words that waive the guarantee go: the payment itself stays.
			rel := r.Span.Start - s.start
			if a, b := segmentAt(sent, rel, rel+len(excerpt)); a > 0 || b < len(strings.TrimRight(sent, ".。 \n")) {
				seg := sent[a:b]
				if zh {
					return fix{original: seg, suggested: "承包人应在预付款支付前提交与预付款等额、由" + zhIssuer + "出具的预付款保函"}
				}
				return fix{original: seg, suggested: "provided that the Contractor first provides an advance payment guarantee in the same amount, issued by " + issuer}
			}
			if !zh && strings.HasPrefix(strings.ToLower(excerpt), "without") && strings.TrimRight(sent, ". \n") != excerpt {
				return phraseFix("against an advance payment guarantee in the same amount, issued by " + issuer)
			}
			if zh {
				return fix{original: sent, suggested: "承包人应在预付款支付前提交与预付款等额、由" + zhIssuer + "出具的预付款保函。", sentence: true}
			}
			return fix{original: sent, suggested: "The Contractor shall provide an advance payment guarantee, in the amount of the advance payment and issued by " +
				issuer + ", before the advance payment is made.", sentence: true}
		}
		return appendFix(sent, zh, ". The advance payment shall be made only after the Contractor has provided an advance payment guarantee in the same amount, issued by "+issuer,
			"。预付款应在承包人提交由"+zhIssuer+"出具的等额预付款保函后支付")
	case RuleTermination:
		victim := partyRef(other(partyIn(sent, 0, len(sent))), zh)
		en := ", provided that it gives 28 days' notice and pays " + victim + " for the work done, the cost of demobilisation and the loss of profit on the work not done"
		cn := "，但应提前28天书面通知，并赔偿" + victim + "已完成工作的价款、撤场费用及未完成工作的预期利润损失"
		if variant > 0 {
			en = ", provided that it pays " + victim + " reasonable compensation, including the loss of profit on the work not done"
			cn = "，但应给予" + victim + "合理补偿，包括未完成工作的预期利润损失"
		}
		if zh { // the proviso goes right after the words that allow the termination
			if t := reTerminate.FindStringIndex(sent); t != nil {
				if c := strings.Index(sent[t[1]:], "，"); c >= 0 {
					at := t[1] + c
					return fix{original: sent, suggested: sent[:at] + cn + sent[at:], sentence: true}
				}
			}
		}
		return appendFix(sent, zh, en, cn)
	}
	for _, p := range lexicon { // RuleModel
		if p.re.MatchString(excerpt) {
			std, alt := p.fix, p.fixAlt
			if std == "" {
				std, alt = p.zhFix, p.zhAlt
			}
			return phraseFix(pick(std, alt))
		}
	}
	return phraseFix("")
}

// capFix caps liability at pct% of the Contract Price.
func capFix(excerpt, sent string, zh bool, pct string) fix {
	switch {
	case reUnlimited.MatchString(excerpt):
		if zh {
			if strings.HasSuffix(excerpt, "责任") {
				return fix{original: excerpt, suggested: "以合同价格的" + pct + "%为限的责任"}
			}
			return fix{original: excerpt, suggested: "以合同价格的" + pct + "%为限"}
		}
		return fix{original: excerpt, suggested: "limited to " + pct + "% of the Contract Price"}
	case reCapPercent.MatchString(excerpt):
		return fix{original: excerpt, suggested: replaceNumber(excerpt, pct)}
	case excerpt == sent: // no cap at all: add one
		return appendFix(sent, zh, ". The total liability of each Party to the other under the Contract shall not exceed "+pct+"% of the Contract Price",
			"。任何一方对另一方的赔偿责任总额以合同价格的"+pct+"%为限")
	}
	if zh { // a fixed sum
		return fix{original: excerpt, suggested: "合同价格的" + pct + "%"}
	}
	return fix{original: excerpt, suggested: pct + "% of the Contract Price"}
}

// segmentAt is the part of a sentence, between commas or semicolons, that holds
// sent[from:to): its start and end, without the spaces around it.
func segmentAt(sent string, from, to int) (start, end int) {
	end = len(strings.TrimRight(sent, ".。 \n"))
	for _, d := range []string{"，", "；", ", ", "; "} {
		if i := strings.LastIndex(sent[:from], d); i >= 0 && i+len(d) > start {
			start = i + len(d)
		}
		if i := strings.Index(sent[to:], d); i >= 0 && to+i < end {
			end = to + i
		}
	}
	for start < end && sent[start] == ' ' {
		start++
	}
	return start, max(end, to)
}

// appendFix adds words to the end of a sentence, before its full stop.
func appendFix(sent string, zh bool, en, cn string) fix {
	add, stop := en, "."
	if zh {
		add, stop = cn, "。"
	}
	body := strings.TrimRight(sent, ".。 ")
	return fix{original: sent, suggested: body + add + stop, sentence: true}
}

// reSpelledNumber is a number written twice, in words and figures: "ninety (90)",
// "90 (ninety)"; reChineseDays, days in Chinese numerals (六十日).
var (
	reSpelledNumber = regexp.MustCompile(`(?i)\b[a-z]+(?:-[a-z]+)?\s*\(\d+\)|\b\d+\s*\([a-z]+(?:-[a-z]+)?\)`)
	reChineseDays   = regexp.MustCompile(`[零〇一二两三四五六七八九十百]+(?:天|日|个工作日)`)
)

// replaceNumber replaces the first number in s (both its words and its
// figures when it is written twice, "ninety (90)").
func replaceNumber(s, n string) string {
	if loc := reSpelledNumber.FindStringIndex(s); loc != nil {
		return s[:loc[0]] + n + s[loc[1]:]
	}
	loc := reNumber.FindStringIndex(s)
	if loc == nil {
		if loc = reChineseDays.FindStringIndex(s); loc != nil {
			num := strings.TrimRight(s[loc[0]:loc[1]], "天日个工作")
			return s[:loc[0]] + n + s[loc[0]+len(num):]
		}
	}
	if loc == nil {
		return s
	}
	return s[:loc[0]] + n + s[loc[1]:]
}
