package dataagent

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// offlinePython writes pandas code for a result: figures of its first
// number column (by its first other column, when there is one) and a chart
// (a line over time, else bars), printing the figures as JSON.
func offlinePython(in pythonIn) string {
	label, value, timeLike := "", "", false
	for _, c := range in.Columns {
		switch {
		case c.Kind == "number" && value == "":
			value = c.Name
		case c.Kind != "number" && label == "":
			label = c.Name
			timeLike = c.Kind == "time" || isPeriodName(c.Name)
		}
	}
	if value == "" {
		return `import json
print(json.dumps({"note": "the result has no number column to analyse"}))
`
	}
	kind := "bar"
	if timeLike {
		kind = "line"
	}
	return fmt.Sprintf(`import json
import pandas as pd
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

plt.rcParams["font.sans-serif"] = ["WenQuanYi Micro Hei", "DejaVu Sans"]
plt.rcParams["axes.unicode_minus"] = False
df = pd.read_csv("result.csv")
label, value, time_like = %q, %q, %s
df[value] = pd.to_numeric(df[value], errors="coerce")
s = df.set_index(label)[value] if label else df[value]
f = {"rows": int(len(df)), "column": value, "total": float(s.sum()), "mean": float(s.mean())}
if label and len(s) > 0:
    f.update({"max_label": str(s.idxmax()), "max": float(s.max()), "min_label": str(s.idxmin()), "min": float(s.min())})
    if s.sum():
        f["max_share"] = float(s.max() / s.sum())
    if time_like and len(s) > 1:
        f.update({"first_label": str(s.index[0]), "first": float(s.iloc[0]), "last_label": str(s.index[-1]), "last": float(s.iloc[-1])})
        if s.iloc[0]:
            f["change"] = float((s.iloc[-1] - s.iloc[0]) / s.iloc[0])
fig, ax = plt.subplots(figsize=(8, 4.5))
s.plot(ax=ax, kind=%q%s)
ax.set_ylabel(value)
ax.set_xlabel(label)
ax.set_title(value + (" by " + label if label else ""))
fig.tight_layout()
fig.savefig("chart.png", dpi=100)
print(json.dumps(f))
`, label, value, pyBool(timeLike), kind, map[bool]string{true: `, marker="o"`, false: ""}[timeLike])
}

func pyBool(b bool) string { return map[bool]string{true: "True", false: "False"}[b] }

func isPeriodName(name string) bool {
	switch name {
	case "day", "week", "month", "quarter", "year":
		return true
	}
	return false
}

// findings is the JSON the offline code prints.
type findings struct {
	Rows       int      `json:"rows"`
	Column     string   `json:"column"`
	Total      float64  `json:"total"`
	Mean       float64  `json:"mean"`
	MaxLabel   string   `json:"max_label"`
	Max        float64  `json:"max"`
	MinLabel   string   `json:"min_label"`
	Min        float64  `json:"min"`
	MaxShare   *float64 `json:"max_share"`
	FirstLabel string   `json:"first_label"`
	First      float64  `json:"first"`
	LastLabel  string   `json:"last_label"`
	Last       float64  `json:"last"`
	Change     *float64 `json:"change"`
	Note       string   `json:"note"`
}

// offlineFindings reads the printed figures into sentences; output that is
// not such JSON is reported as its first lines.
func offlineFindings(in analyzeIn) []string {
	zh := in.Language == "zh"
	lines := strings.Split(strings.TrimSpace(in.Stdout), "\n")
	var f findings
	if len(lines) == 0 || json.Unmarshal([]byte(lines[len(lines)-1]), &f) != nil || f.Column == "" {
		var out []string
		for _, l := range lines {
			if l = strings.TrimSpace(l); l != "" && len(out) < 10 {
				out = append(out, l)
			}
		}
		return out
	}
	out := []string{fmt.Sprintf(pick(zh, "%d rows: %s totals %s, %s on average.", "共 %d 行：%s 合计 %s，平均 %s。"),
		f.Rows, f.Column, number(f.Total), number(f.Mean))}
	if f.MaxLabel != "" {
		s := fmt.Sprintf(pick(zh, "Highest: %s (%s); lowest: %s (%s).", "最高：%s（%s）；最低：%s（%s）。"), f.MaxLabel, number(f.Max), f.MinLabel, number(f.Min))
		if f.MaxShare != nil {
			s += fmt.Sprintf(pick(zh, " The highest is %s of the total.", "最高者占合计的 %s。"), percent(*f.MaxShare))
		}
		out = append(out, s)
	}
	if f.FirstLabel != "" && f.Change != nil {
		out = append(out, fmt.Sprintf(pick(zh, "From %s to %s it went from %s to %s (%s).", "从 %s 到 %s，由 %s 变为 %s（%s）。"),
			f.FirstLabel, f.LastLabel, number(f.First), number(f.Last), signedPercent(*f.Change)))
	}
	return out
}

// number writes a figure with thousands separators and at most two decimals.
func number(v float64) string {
	neg := v < 0
	v = math.Abs(v)
	s := strconv.FormatFloat(v, 'f', 2, 64)
	if v == math.Trunc(v) {
		s = strconv.FormatFloat(v, 'f', 0, 64)
	}
	intPart, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	for i, r := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if frac != "" {
		b.WriteString("." + frac)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

func percent(v float64) string { return strconv.FormatFloat(v*100, 'f', 1, 64) + "%" }

func signedPercent(v float64) string {
	if v > 0 {
		return "+" + percent(v)
	}
	return percent(v)
}
