package dataagent

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"weft/internal/workflow/dataagent/nlsql"
)

// offlineSummary states the answer with its key numbers, read from the
// last sql step's result: one figure; the first and last, highest and
// lowest of groups or periods; a share with its parts; a growth with its
// two periods.
func offlineSummary(in summaryIn) string {
	u := nlsql.Understand(in.question())
	zh := in.Language == "zh"
	data := lastData(in.Steps)
	if data == nil {
		return pick(zh, "No SQL step produced a result, so there is no answer to report.", "没有 SQL 步骤产生结果，因此无法给出答案。")
	}
	s := u.Spec
	// No rows, or one aggregate over no rows (a SUM of nothing is NULL): no data.
	if len(data.Rows) == 0 || s.Kind == nlsql.SpecAggregate && len(s.Dims) == 0 && len(data.Rows) == 1 && len(data.Rows[0]) == 1 && data.Rows[0][0] == "" {
		return fmt.Sprintf(pick(zh, "The query returned no rows %s %s: there is no data for it.", "查询%s%s没有返回任何行：没有相应的数据。"), s.ScopeText(zh), s.PeriodText(zh))
	}
	get := func(row []string, name string) string {
		i := slices.IndexFunc(data.Columns, func(c ResultColumn) bool { return c.Name == name })
		if i < 0 || i >= len(row) {
			return ""
		}
		return row[i]
	}
	scope := strings.TrimSpace(s.ScopeText(zh) + " " + s.PeriodText(zh))
	switch {
	case s.Kind == nlsql.SpecList:
		return fmt.Sprintf(pick(zh, "%d rows of %s %s.", "共 %d 行%s（%s）。"), len(data.Rows), s.Measure.Name, scope)
	case s.Kind == nlsql.SpecGrowth && len(s.Dims) == 0:
		row := data.Rows[0]
		cur, prev, g := get(row, "current_"+s.Measure.Label), get(row, "previous_"+s.Measure.Label), get(row, "growth")
		return fmt.Sprintf(pick(zh, "%s was %s in %s against %s in %s: a change of %s.", "%s在%s为 %s，%s为 %s，变化 %s。"),
			s.Measure.Name, fmtNum(cur), s.Time.Range.Label, fmtNum(prev), s.Baseline.Label, fmtShare(g, true))
	case s.Kind == nlsql.SpecRatio && len(s.Dims) == 0:
		row := data.Rows[0]
		return fmt.Sprintf(pick(zh, "%s: %s — %s of %s %s.", "%s：占比 %s（%s / %s），%s。"),
			s.Measure.Name, fmtShare(get(row, "share"), false), fmtNum(get(row, "part")), fmtNum(get(row, "total")), scope)
	case len(s.Dims) == 0:
		return fmt.Sprintf(pick(zh, "%s %s: %s.", "%s%s：%s。"), s.Measure.Name, scope, fmtNum(get(data.Rows[0], s.Measure.Label)))
	}
	return groupsSummary(s, data, zh, scope, get)
}

// groupsSummary summarises a grouped result.
func groupsSummary(s nlsql.Spec, data *ResultSet, zh bool, scope string, get func([]string, string) string) string {
	label := s.Dims[0].Label
	value := s.Measure.Label
	if s.Kind == nlsql.SpecGrowth {
		value = "growth"
	}
	var parts []string
	for i, row := range data.Rows {
		if i == 5 {
			break
		}
		v := fmtNum(get(row, value))
		if value == "growth" {
			v = fmtShare(get(row, value), true)
		}
		switch {
		case s.Kind == nlsql.SpecRatio && len(s.Measure.Numerator) == 0:
			v += " (" + fmtShare(get(row, "share"), false) + ")"
		case s.Kind == nlsql.SpecRatio: // each group's own rate: part of total (nlsql's measureExprs)
			v = fmtShare(get(row, "share"), false) + fmt.Sprintf(pick(zh, " (%s of %s)", "（%s / %s）"), fmtNum(get(row, "part")), fmtNum(get(row, "total")))
		}
		parts = append(parts, get(row, label)+" "+v)
	}
	more := ""
	if len(data.Rows) > 5 {
		more = pick(zh, fmt.Sprintf(", … (%d in all)", len(data.Rows)), fmt.Sprintf("……（共 %d 项）", len(data.Rows)))
	}
	head := pick(zh, "%s by %s %s: ", "%s按%s（%s）：")
	if s.Ranked {
		head = pick(zh, "%s, top by %s %s: ", "%s排名（按%s，%s）：")
	}
	return fmt.Sprintf(head, s.Measure.Name, s.Dims[0].Name, scope) + strings.Join(parts, pick(zh, "; ", "；")) + more + pick(zh, ".", "。")
}

// fmtNum writes a result cell as a number when it is one.
func fmtNum(cell string) string {
	v, err := strconv.ParseFloat(cell, 64)
	if err != nil {
		if cell == "" {
			return "n/a"
		}
		return cell
	}
	return number(v)
}

// fmtShare writes a fraction as a percentage.
func fmtShare(cell string, signed bool) string {
	v, err := strconv.ParseFloat(cell, 64)
	if err != nil {
		return "n/a"
	}
	if signed {
		return signedPercent(v)
	}
	return percent(v)
}
