package nlsql

import (
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Intent is what a message asks for, read before any catalog is consulted.
type Intent struct {
	// Analysis: the message asks something of the data.
	Analysis bool `json:"analysis"`
	// FollowUp: the message narrows or changes the previous question
	// ("and for last quarter?", "只看华东").
	FollowUp bool   `json:"follow_up"`
	Language string `json:"language"` // "en" or "zh"
	// Kind names a message that is not an analysis: greeting, thanks,
	// help, other.
	Kind  string `json:"kind,omitempty"`
	Reply string `json:"reply,omitempty"` // the direct answer when not an analysis
}

var (
	greeting   = regexp.MustCompile(`(?i)^\s*(?:hi|hello|hey|good (?:morning|afternoon|evening)|你好|您好|嗨|早上好|下午好|晚上好)\b?[\s!！,.。，]*$`)
	thanks     = regexp.MustCompile(`(?i)^\s*(?:thanks?(?: you)?|thank you(?: very much)?|cheers|谢谢(?:你|您)?|多谢|感谢)[\s!！,.。，]*$`)
	help       = regexp.MustCompile(`(?i)\b(?:who are you|what can you do|what do you do|help me|how do i use|what are you)\b|你是谁|你能做什么|你会什么|怎么用|帮助`)
	qword      = regexp.MustCompile(`(?i)\b(?:what|how|which|when|who|whose|list|show|compare|rank)\b|多少|几|哪|什么|怎样|如何|是否|列出|统计|排名|对比|比较`)
	leadFollow = regexp.MustCompile(`(?i)^\s*(?:and\b|what about\b|how about\b|only\b|just\b|same for\b|now\b|instead\b|then\b|那|那么|只看|仅看|只要|换成|改成|改为|如果是|再看|还有)`)
)

// ClassifyIntent reads a message. hasPrevious says whether the thread has
// an earlier question a follow-up could narrow; schema names the data for
// the direct reply.
func ClassifyIntent(message string, hasPrevious bool, schema string, now time.Time) Intent {
	zh := hasHan(message)
	in := Intent{Language: map[bool]string{true: "zh", false: "en"}[zh]}
	p := parse(message, nil, now, 0, 0)
	analysisWords, times := 0, 0
	for _, it := range p.items {
		switch {
		case it.time != nil:
			times++
		case it.has(mAgg) || it.has(mGroup) || it.has(mTop) || it.has(mWhich) || it.has(mRatio) || it.has(mGrowth) || it.has(mList) || it.has(mBucket):
			analysisWords++
		}
	}
	switch {
	case greeting.MatchString(message):
		in.Kind = "greeting"
	case thanks.MatchString(message):
		in.Kind = "thanks"
	case help.MatchString(message):
		in.Kind = "help"
	case hasPrevious && (leadFollow.MatchString(message) || strings.HasSuffix(strings.TrimRight(message, " ?？"), "呢") ||
		(times > 0 && analysisWords == 0 && len(tokenize(message)) <= 8)):
		in.Analysis, in.FollowUp = true, true
	case leadFollow.MatchString(message) && analysisWords == 0 && !qword.MatchString(message):
		in.Kind = "orphan_follow_up"
	case analysisWords > 0 || times > 0 || qword.MatchString(message):
		in.Analysis = true
	default:
		in.Kind = "other"
	}
	if !in.Analysis {
		in.Reply = directReply(in.Kind, schema, zh)
	}
	return in
}

func directReply(kind, schema string, zh bool) string {
	if zh {
		intro := "我可以回答关于数据集 " + schema + " 的问题，例如“上个月各地区的GMV”或“2025年有多少订单退款？”。"
		switch kind {
		case "greeting":
			return "你好！" + intro
		case "thanks":
			return "不客气！还有其他数据问题可以继续问我。"
		case "orphan_follow_up":
			return "这像是一个追问，但这个会话里还没有可以追问的问题。请先完整地提一个问题，例如“上个月的GMV是多少？”。"
		}
		return "这不是一个数据分析问题。" + intro
	}
	intro := "I answer questions about the data in schema " + schema + `, for example "GMV by region last month" or "How many orders were refunded in 2025?".`
	switch kind {
	case "greeting":
		return "Hello! " + intro
	case "thanks":
		return "You're welcome. Ask me another question about the data whenever you like."
	case "orphan_follow_up":
		return `That reads like a follow-up, but this conversation has no question yet to follow up on. Ask a whole question first, for example "What was the GMV last month?".`
	}
	return "That is not a question about the data. " + intro
}

var fillers = map[string]bool{"for": true, "in": true, "the": true, "of": true, "on": true, "的": true, "about": true}

// Enhance rewrites a follow-up as a question that stands alone, for
// display: the previous question with the follow-up's period in place of
// its own, and the rest of the follow-up after it. Understand reads the
// parts themselves.
func Enhance(previous, followUp string, now time.Time) string {
	pt := findTimes(previous, now, 0)
	year := 0
	if len(pt) > 0 {
		year = pt[0].rng.From.Year()
	}
	ft := findTimes(followUp, now, year)
	out := previous
	rest := followUp
	if len(ft) > 0 {
		when := followUp[ft[0].start:ft[0].end]
		if ft[0].quarter > 0 { // a quarter without its year: say the year it was read with
			when = pick(hasHan(when), fmt.Sprintf("%s %d", when, ft[0].rng.From.Year()), fmt.Sprintf("%d年%s", ft[0].rng.From.Year(), when))
		}
		if len(pt) > 0 {
			out = previous[:pt[0].start] + when + previous[pt[0].end:]
		} else {
			out = strings.TrimRight(previous, " ?？。.") + " " + when + "?"
		}
		rest = followUp[:ft[0].start] + followUp[ft[0].end:]
	}
	rest = strings.TrimSpace(leadFollow.ReplaceAllString(rest, ""))
	rest = strings.TrimSuffix(strings.Trim(rest, " ?？。.,，!！"), "呢")
	fields := strings.Fields(rest)
	for len(fields) > 0 && fillers[strings.ToLower(fields[0])] {
		fields = fields[1:]
	}
	for len(fields) > 0 && fillers[strings.ToLower(fields[len(fields)-1])] {
		fields = fields[:len(fields)-1]
	}
	if rest = strings.Join(fields, " "); rest != "" {
		if hasHan(rest) {
			out += "（" + rest + "）"
		} else {
			out += " (" + rest + ")"
		}
	}
	return out
}
