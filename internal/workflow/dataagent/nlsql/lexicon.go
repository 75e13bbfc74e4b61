package nlsql

import (
	"slices"
	"sort"
	"strings"
)

// meaningKind is what a matched phrase stands for.
type meaningKind uint8

const (
	mTable meaningKind = iota + 1
	mColumn
	mValue
	mMetric    // a note's measure ("GMV")
	mValueSet  // a note's set of values ("华东")
	mQualifier // a note's qualified entity ("active customer")
	mInfo      // a note's term whose definition could not be compiled ("AOV")
	mAgg       // total, average, how many…
	mGroup     // by, per, each, 各…
	mBucket    // month, quarterly, 每月…
	mTop       // top, highest, 最多…
	mWhich     // which, 哪个
	mRatio     // share, 占比…
	mGrowth    // growth, 环比, 同比…
	mList      // list, show, 列出
	mStop      // words that carry no meaning here
	mFollow    // follow-up markers: "and", "what about", 只看
	mNoChart   // "no chart", 不要图表
	mChart     // "chart", 画图
)

// meaning is one reading of a phrase.
type meaning struct {
	kind   meaningKind
	table  string
	column string
	value  string
	agg    string // sum, avg, count, max, min; "count?" for a weak count (多少)
	unit   string // bucket unit; growth: "adjacent" or "yoy"
	desc   bool   // top: highest first
	// grouped marks a bucket word that groups by itself (monthly, 每月);
	// a plain one (month, 月) groups after a group word (by, 各).
	grouped bool
	note    *noteDef
}

// term is a phrase (token texts) and its readings.
type term struct {
	toks  []string
	means []meaning
}

// lexicon maps phrases to readings; lookups take the longest phrase.
type lexicon struct {
	byFirst map[string][]*term
	byKey   map[string]*term
}

func newLexicon() *lexicon {
	return &lexicon{byFirst: map[string][]*term{}, byKey: map[string]*term{}}
}

// add records phrase (any text, tokenized like questions are) with m.
func (l *lexicon) add(phrase string, m meaning) {
	toks := words(phrase)
	if len(toks) == 0 {
		return
	}
	key := strings.Join(toks, "\x00")
	t := l.byKey[key]
	if t == nil {
		t = &term{toks: toks}
		l.byKey[key] = t
		l.byFirst[toks[0]] = append(l.byFirst[toks[0]], t)
		sort.SliceStable(l.byFirst[toks[0]], func(i, j int) bool {
			return len(l.byFirst[toks[0]][i].toks) > len(l.byFirst[toks[0]][j].toks)
		})
	}
	for _, have := range t.means {
		if have.kind == m.kind && have.table == m.table && have.column == m.column && have.value == m.value && have.agg == m.agg &&
			have.unit == m.unit && have.note == m.note {
			return
		}
	}
	t.means = append(t.means, m)
}

// match returns the longest term starting at toks[i].
func (l *lexicon) match(toks []token, i int) *term {
	for _, t := range l.byFirst[toks[i].text] {
		if i+len(t.toks) > len(toks) {
			continue
		}
		ok := true
		for k, w := range t.toks {
			if toks[i+k].text != w {
				ok = false
				break
			}
		}
		if ok {
			return t
		}
	}
	return nil
}

// vocabulary is the fixed bilingual analysis vocabulary.
var vocabulary = func() *lexicon {
	l := newLexicon()
	add := func(m meaning, phrases ...string) {
		for _, p := range phrases {
			l.add(p, m)
		}
	}
	add(meaning{kind: mAgg, agg: "sum"}, "total", "sum", "sum of", "in total", "overall", "combined", "总", "总计", "合计", "总共", "总额", "累计", "一共", "总和")
	add(meaning{kind: mAgg, agg: "avg"}, "average", "mean", "avg", "on average", "平均", "均值", "平均值", "平均每")
	add(meaning{kind: mAgg, agg: "count"}, "how many", "number of", "count", "count of", "多少个", "几个", "几", "数量", "数", "个数", "总数", "几家", "多少家", "多少笔", "多少位", "多少名", "多少单")
	add(meaning{kind: mAgg, agg: "count?"}, "多少", "有多少", "量")
	add(meaning{kind: mAgg, agg: "max"}, "maximum", "max", "最大值", "最高值")
	add(meaning{kind: mAgg, agg: "min"}, "minimum", "min", "最小值", "最低值")
	add(meaning{kind: mGroup}, "by", "per", "each", "for each", "every", "across", "broken down by", "breakdown by", "split by", "grouped by", "group by", "各", "各个", "每个", "每", "按", "按照", "分", "分别", "不同", "逐")
	for unit, ps := range map[string][2][]string{
		"month":   {{"month", "月", "月份"}, {"monthly", "月度", "每月", "逐月", "按月", "每个月", "各月", "每一个月", "按月份", "每个月份", "各月份", "各个月份", "逐月份", "每一个月份"}},
		"quarter": {{"quarter", "季度", "季"}, {"quarterly", "每季度", "按季度", "每个季度", "各季度"}},
		"year":    {{"year", "年", "年度", "年份"}, {"yearly", "annual", "annually", "每年", "按年", "各年", "逐年", "按年份", "各年份", "每个年份", "按年度", "各年度"}},
		"week":    {{"week", "周"}, {"weekly", "每周", "按周", "逐周", "各周"}},
		"day":     {{"day", "天", "日"}, {"daily", "每天", "每日", "按天", "按日", "逐日"}},
	} {
		add(meaning{kind: mBucket, unit: unit}, ps[0]...)
		add(meaning{kind: mBucket, unit: unit, grouped: true}, ps[1]...)
	}
	add(meaning{kind: mTop, desc: true}, "top", "best", "highest", "most", "largest", "biggest", "leading", "greatest",
		"最高", "最多", "最大", "前", "排名前", "最好", "最佳", "排名最高", "排行")
	add(meaning{kind: mTop, desc: false}, "bottom", "lowest", "least", "fewest", "smallest", "worst", "最低", "最少", "最小", "最差", "倒数")
	add(meaning{kind: mWhich}, "which", "哪个", "哪些", "哪一个", "哪家", "哪位", "哪")
	add(meaning{kind: mRatio}, "share", "proportion", "percentage", "percent", "ratio", "rate", "fraction",
		"占比", "比例", "比重", "比率", "百分比", "率", "所占比例", "占")
	add(meaning{kind: mGrowth, unit: "adjacent"}, "grow", "growth", "increase", "decrease", "decline", "change", "compared", "compared with",
		"compared to", "compare", "versus", "vs", "month over month", "quarter over quarter", "mom", "qoq", "relative to",
		"增长", "增长率", "增幅", "增加", "下降", "变化", "环比", "相比", "对比", "较", "比", "相较")
	add(meaning{kind: mGrowth, unit: "yoy"}, "year over year", "year on year", "yoy", "same period last year", "同比", "同期", "去年同期")
	add(meaning{kind: mList}, "list", "show", "display", "give", "列出", "显示", "查看", "看看", "展示", "列举")
	add(meaning{kind: mNoChart}, "no chart", "without chart", "without a chart", "skip the chart", "no python", "without python", "skip python",
		"不要图表", "不需要图表", "不用图表", "不要图", "不用画图", "不需要python", "不要python", "无需图表")
	add(meaning{kind: mChart}, "chart", "plot", "graph", "visualize", "visualise", "trend", "图表", "画图", "图", "趋势", "可视化", "走势")
	add(meaning{kind: mFollow}, "and", "what about", "how about", "only", "just", "instead", "now", "same", "also", "too", "then",
		"那", "那么", "只看", "仅看", "只要", "只", "仅", "换成", "改成", "改为", "如果是", "再看", "还有", "呢", "再", "还", "也")
	add(meaning{kind: mStop}, stopWords...)
	return l
}()

var stopWords = []string{
	"what", "was", "is", "are", "were", "be", "been", "being", "the", "a", "an", "of", "in", "on", "for", "did", "do", "doe", "done",
	"how", "much", "there", "we", "our", "us", "have", "has", "had", "me", "my", "i", "you", "your", "give", "tell", "please", "with",
	"that", "this", "these", "those", "to", "it", "its", "all", "any", "so", "far", "as", "at", "during", "period", "value", "figure",
	"data", "result", "can", "could", "would", "will", "about", "into", "out", "up", "make", "made", "get", "got",
	"whose", "who", "whom", "where", "when", "than", "their", "them", "they", "he", "she", "was it", "between", "within",
	"number", "level", "metric", "kpi", "figure", "overview", "summary", "currently", "current", "right now", "today's",
	"come", "came", "from", "generate", "generated", "bring", "place", "placed", "buy", "bought", "sell", "sold", "spend",
	"spent", "happen", "happened", "occur", "occurred", "take", "took", "receive", "received", "get", "achieve", "achieved", "brought", "record", "recorded", "see", "look", "let", "know", "want",
	"的", "是", "了", "在", "有", "吗", "呢", "啊", "呀", "吧", "个", "些", "和", "及", "以及", "或", "并", "把", "被", "给",
	"对", "从", "到", "为", "于", "中", "里", "内", "我们", "我", "你", "请", "帮", "帮我", "一下", "统计", "计算", "查询", "分析",
	"情况", "当前", "目前", "现在", "什么", "怎么样", "如何", "数据", "共", "都", "所有", "全部", "总体", "整体", "名", "位", "笔",
	"件", "期间", "时候", "时", "期", "的话", "看", "地", "是多少", "有多少个", "分别是", "多大", "怎样", "了多少", "达到", "为多少",
	"产生", "带来", "来自", "贡献", "共计", "额", "值", "多", "少", "高", "大", "小", "低", "其", "该", "这", "这些", "那些",
	"目前为止", "截至", "至今", "累计到", "之", "以", "上", "下",
}

// kindOf reports whether any of a term's readings is of kind k.
func (t *term) has(k meaningKind) bool {
	return slices.ContainsFunc(t.means, func(m meaning) bool { return m.kind == k })
}
