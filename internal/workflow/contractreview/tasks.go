package contractreview

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"weft/internal/llm"
)

// The model calls of the workflow. Each is an llm.Task: the system prompt a
// model gets, and the offline answer computed from the same input.

// riskIn is a clause put to the model for risks the rules do not cover.
type riskIn struct {
	ClauseID string `json:"clause_id"`
	Title    string `json:"title,omitempty"`
	Text     string `json:"text"`
	OurParty string `json:"our_party"`
	// OurRole is our party's role (contractor, employer) when the review
	// could resolve it, for the offline provider to tell whose right a
	// one-sided wording grants.
	OurRole  string `json:"our_role,omitempty"`
	Language string `json:"language"`
}

// modelRisk is a risk as the model reports it: the exact words it cites.
type modelRisk struct {
	Excerpt     string `json:"excerpt"`
	Severity    string `json:"severity"`
	Description string `json:"description"`
}

type riskOut struct {
	Risks []modelRisk `json:"risks"`
}

// phrase is a one-sided wording the offline provider recognises, with the
// fairer wording it proposes (two variants: the second is used when a
// reviewer rejects the first). The party named last before the words is the
// one the wording favours ("the Employer may … at its sole discretion"), or,
// when subjectLoses, the one it binds ("the Contractor waives all claims").
type phrase struct {
	re           *regexp.Regexp
	en, zh       string
	fix, fixAlt  string
	zhFix, zhAlt string
	subjectLoses bool
}

// victim is the party a phrase found at loc in text disadvantages: "" when the
// sentence names no party before it.
func (p phrase) victim(text string, at int) string {
	s := sentenceAt(text, at)
	who := lastPartyIn(text, s.start, at)
	if p.subjectLoses || who == "" || who == roleBoth {
		return who
	}
	return other(who)
}

var lexicon = []phrase{
	{regexp.MustCompile(`(?i)\b(?:sole|absolute)\s+(?:and\s+absolute\s+)?discretion\b`), "One party decides alone, with no standard of reasonableness.", "一方可单方裁量，没有合理性标准。",
		"reasonable discretion", "discretion, exercised reasonably and in good faith", "", "", false},
	{regexp.MustCompile(`(?i)\bwithout\s+(?:prior\s+|any\s+)?notice\b`), "Action may be taken without notice to the other party.", "可不经通知即采取行动。",
		"after giving 14 days' prior written notice", "after giving reasonable prior written notice", "", "", false},
	{regexp.MustCompile(`(?i)\b(?:irrevocably\s+)?waives?\s+(?:any\s+and\s+all|any|all)\s+(?:rights?|claims?)\b`), "A party gives up its rights in advance.", "一方预先放弃权利。",
		"does not waive its rights", "retains its rights", "", "", true},
	{regexp.MustCompile(`无条件`), "An unconditional obligation.", "无条件的义务，缺少前提条件。", "", "", "在符合合同约定条件的前提下", "在双方确认的条件下", true},
	{regexp.MustCompile(`单方(?:决定|调整|变更)`), "One party decides or changes terms alone.", "一方可单方决定或变更。", "", "", "经双方协商一致后决定", "经双方书面确认后调整", false},
	{regexp.MustCompile(`不得提出任何异议`), "The other party may not object.", "另一方不得提出异议。", "", "", "可在7天内提出书面异议", "可在合理期限内提出异议", true},
}

var riskTask = llm.Task[riskIn, riskOut]{
	Name: "contractreview.clause_risks",
	System: `You review one clause of a construction contract for the party named our_party.
List the one-sided or unusual terms that put our_party at risk, beyond these six, which are checked separately:
liability caps, indemnities, advance payment guarantees, claim notice periods, payment periods and termination for convenience.
Cite each risk by its exact words in the clause.
Answer JSON: {"risks": [{"excerpt": "<exact words from the clause>", "severity": "critical|high|medium|low", "description": "<why it is a risk, in the clause's language>"}]}.
Answer {"risks": []} when there is none.`,
	Offline: func(_ context.Context, in riskIn) (riskOut, error) {
		zh := isChinese(in.Language, in.Text)
		out := riskOut{Risks: []modelRisk{}}
		for _, p := range lexicon {
			for _, loc := range p.re.FindAllStringIndex(in.Text, -1) {
				if !hurts(p.victim(in.Text, loc[0]), in.OurRole) {
					continue // the wording favours our party
				}
				desc := p.en
				if zh {
					desc = p.zh
				}
				out.Risks = append(out.Risks, modelRisk{Excerpt: in.Text[loc[0]:loc[1]], Severity: SeverityMedium, Description: desc})
			}
		}
		return out, nil
	},
	Check: func(in riskIn, out riskOut) error {
		for _, r := range out.Risks {
			if r.Excerpt == "" || !strings.Contains(in.Text, r.Excerpt) {
				return fmt.Errorf("risk excerpt %q is not in the clause", r.Excerpt)
			}
			if !validSeverity(r.Severity) {
				return fmt.Errorf("risk severity %q is not critical, high, medium or low", r.Severity)
			}
		}
		return nil
	},
}

func validSeverity(s string) bool {
	for _, v := range Severities {
		if s == v {
			return true
		}
	}
	return false
}

// draftTarget is one risk to propose a change for.
type draftTarget struct {
	Risk RiskPoint `json:"risk"`
	// Previous is the diff this one replaces: the one that failed
	// validation (Issue says why), or the one the reviewer rejected
	// (Feedback says why).
	Previous *DocumentDiff `json:"previous,omitempty"`
	Issue    string        `json:"issue,omitempty"`
	Detail   string        `json:"detail,omitempty"`
	Feedback string        `json:"feedback,omitempty"`
}

type draftIn struct {
	ClauseID string        `json:"clause_id"`
	Text     string        `json:"text"`
	OurParty string        `json:"our_party"`
	Language string        `json:"language"`
	Attempt  int           `json:"attempt"`
	Targets  []draftTarget `json:"targets"`
}

// draftItem is one proposed change: replace Original (exact clause words) with Suggested.
type draftItem struct {
	RiskID    string `json:"risk_id"`
	Original  string `json:"original"`
	Suggested string `json:"suggested"`
	Reason    string `json:"reason"`
}

type draftOut struct {
	Diffs []draftItem `json:"diffs"`
}

var draftTask = llm.Task[draftIn, draftOut]{
	Name: "contractreview.clause_redline",
	System: `You draft redline changes to one clause of a construction contract for our_party.
For each target risk, propose one change: "original" is the exact, contiguous clause text to replace, occurring exactly once in the clause
(widen it to the whole sentence if a shorter phrase repeats); "suggested" is the replacement; "reason" explains it briefly in the clause's language.
The change must remove the risk and must not weaken our_party's position in any other way.
When a target has "previous" and "issue", your earlier proposal failed that check: fix it.
When a target has "feedback", the reviewer rejected "previous" for that reason: follow the feedback.
Answer JSON: {"diffs": [{"risk_id": "...", "original": "...", "suggested": "...", "reason": "..."}]}.`,
	Offline: func(_ context.Context, in draftIn) (draftOut, error) {
		out := draftOut{Diffs: []draftItem{}}
		for _, t := range in.Targets {
			if d, ok := draftOffline(in, t); ok {
				out.Diffs = append(out.Diffs, d)
			}
		}
		return out, nil
	},
	Check: func(in draftIn, out draftOut) error {
		known := map[string]bool{}
		for _, t := range in.Targets {
			known[t.Risk.RiskID] = true
		}
		for _, d := range out.Diffs {
			if !known[d.RiskID] {
				return fmt.Errorf("a diff answers risk %q, which was not asked about", d.RiskID)
			}
		}
		return nil
	},
}

// draftOffline proposes a change for one target without a model.
func draftOffline(in draftIn, t draftTarget) (draftItem, bool) {
	if t.Risk.Span == nil {
		return draftItem{}, false
	}
	zh := isChinese(in.Language, in.Text)
	variant, override := 0, ""
	if t.Feedback != "" {
		if q := quoted(t.Feedback); q != "" && t.Previous != nil {
			return draftItem{RiskID: t.Risk.RiskID, Original: t.Previous.Original, Suggested: q, Reason: revisedReason(t.Feedback, zh)}, true
		}
		override, variant = firstNumber(t.Feedback), 1
	}
	if t.Issue == CheckWeakens {
		override, variant = "", 1
	}
	f := fixFor(in.Text, t.Risk, zh, variant, override)
	if t.Previous != nil && t.Feedback != "" && f.suggested == t.Previous.Suggested {
		f = fixFor(in.Text, t.Risk, zh, 1, "")
	}
	// After an ambiguous span, widen a phrase change to its whole sentence.
	if t.Issue == CheckSpan && !f.sentence {
		s := sentenceAt(in.Text, t.Risk.Span.Start)
		orig := in.Text[s.start:s.end]
		f = fix{original: orig, suggested: strings.Replace(orig, f.original, f.suggested, 1), sentence: true}
	}
	reason := reasonFor(t.Risk, zh)
	if t.Feedback != "" {
		reason = revisedReason(t.Feedback, zh)
	}
	return draftItem{RiskID: t.Risk.RiskID, Original: f.original, Suggested: f.suggested, Reason: reason}, true
}

func reasonFor(r RiskPoint, zh bool) string {
	if zh {
		return "消除风险：" + r.Description
	}
	return "Removes the risk: " + r.Description
}

func revisedReason(feedback string, zh bool) string {
	if zh {
		return "按审核人意见修改：" + quote(feedback)
	}
	return "Revised after the reviewer's feedback: " + quote(feedback)
}

var (
	reQuoted = regexp.MustCompile(`[“"「『]([^”"」』]{2,})[”"」』]`)
	reNumber = regexp.MustCompile(`\d+(?:\.\d+)?`)
)

func quoted(s string) string {
	if m := reQuoted.FindStringSubmatch(s); m != nil {
		return strings.TrimSpace(m[1])
	}
	return ""
}

func firstNumber(s string) string { return reNumber.FindString(s) }
