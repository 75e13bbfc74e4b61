package bideval

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Fact patterns: the bid price and the delivery time, in English and Chinese.
var (
	pricePattern    = regexp.MustCompile(`(?i)(?:total (?:bid )?price|bid price|contract price|quoted price|投标总价|投标报价|总报价|报价|总价)[^0-9\n]{0,24}?([0-9][0-9,，]*(?:\.[0-9]+)?)\s*(万|million|m\b)?`)
	deliveryPattern = regexp.MustCompile(`(?i)(?:deliver(?:y|ed)?(?: time| period| within)?|lead time|交货期|交付期|供货期|工期|交货)[^0-9\n]{0,30}?([0-9]+)\s*(?:calendar |working )?(?:days?|天|日|个日历天)`)
)

// evaluateRule decides one hard rule from its evidence chunks.
func evaluateRule(r HardRule, ev []RetrievedChunk, p Project) RuleResult {
	res := RuleResult{RuleID: r.ID, Name: r.Name, Kind: r.Kind, Severity: r.Severity, ChunkIDs: []string{}}
	if res.Severity == "" {
		res.Severity = "flag"
	}
	switch r.Kind {
	case RuleRequiredDocument:
		for _, c := range ev {
			lower := strings.ToLower(c.Text + " " + c.Document)
			for _, k := range r.Keywords {
				if strings.Contains(lower, strings.ToLower(k)) {
					res.Passed, res.Value = true, k
					res.ChunkIDs = append(res.ChunkIDs, c.ChunkID)
					res.Reason = fmt.Sprintf("found %q in %s", k, c.Document)
					return res
				}
			}
		}
		res.Reason = fmt.Sprintf("no bid document mentions any of %s", strings.Join(r.Keywords, ", "))
	case RuleMaxPrice:
		limit := r.Max
		if limit == 0 {
			limit = p.Budget
		}
		v, id, ok := findNumber(pricePattern, ev, true)
		if !ok {
			res.Reason = "no bid price stated"
			return res
		}
		res.Value, res.ChunkIDs = formatAmount(v), []string{id}
		res.Passed = v <= limit
		res.Reason = fmt.Sprintf("bid price %s %s the limit %s", formatAmount(v), map[bool]string{true: "is within", false: "exceeds"}[res.Passed], formatAmount(limit))
	case RuleMaxDeliveryDays:
		v, id, ok := findNumber(deliveryPattern, ev, false)
		if !ok {
			res.Reason = "no delivery time stated"
			return res
		}
		res.Value, res.ChunkIDs = fmt.Sprintf("%g days", v), []string{id}
		res.Passed = v <= r.Max
		res.Reason = fmt.Sprintf("delivery in %g days %s the maximum of %g", v, map[bool]string{true: "meets", false: "exceeds"}[res.Passed], r.Max)
	case RuleMinNumber, RuleMaxNumber:
		re, err := regexp.Compile("(?i)" + r.Pattern)
		if err != nil {
			res.Reason = "invalid pattern: " + err.Error()
			return res
		}
		v, id, ok := findNumber(re, ev, false)
		if !ok {
			res.Reason = "no figure stated in the bid"
			return res
		}
		res.Value, res.ChunkIDs = strconv.FormatFloat(v, 'f', -1, 64), []string{id}
		if r.Kind == RuleMinNumber {
			res.Passed = v >= r.Min
			res.Reason = fmt.Sprintf("%g %s the minimum of %g", v, map[bool]string{true: "meets", false: "is below"}[res.Passed], r.Min)
		} else {
			res.Passed = v <= r.Max
			res.Reason = fmt.Sprintf("%g %s the maximum of %g", v, map[bool]string{true: "meets", false: "exceeds"}[res.Passed], r.Max)
		}
	default:
		res.Reason = fmt.Sprintf("unknown rule kind %q", r.Kind)
	}
	return res
}

// findNumber returns the first number the pattern captures in the chunks
// (best-ranked first), with the chunk it came from. With scale, "万" and
// "million" multiply it.
func findNumber(re *regexp.Regexp, ev []RetrievedChunk, scale bool) (float64, string, bool) {
	for _, c := range ev {
		m := re.FindStringSubmatch(c.Text)
		if m == nil {
			continue
		}
		v, err := strconv.ParseFloat(strings.NewReplacer(",", "", "，", "").Replace(m[1]), 64)
		if err != nil {
			continue
		}
		if scale && len(m) > 2 {
			switch strings.ToLower(m[2]) {
			case "万":
				v *= 10000
			case "million", "m":
				v *= 1_000_000
			}
		}
		return v, c.ChunkID, true
	}
	return 0, "", false
}

func formatAmount(v float64) string { return groupDigits(strconv.FormatFloat(v, 'f', 0, 64)) }
