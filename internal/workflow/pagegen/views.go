package pagegen

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"weft/internal/graph"
	"weft/internal/workflow"
)

// Panel is the thread page's panel: where the session is (a stage and a bar), what it is
// building, the waiting feedback, the score card and the rounds so far. The thread page
// renders it again on every step.
func Panel(_ context.Context, t workflow.Thread, offline bool) ([]workflow.Block, error) {
	s, err := workflow.DecodeState[GraphState](t.State)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(s.UserInput) == "" {
		return nil, nil // not started
	}
	waiting := slices.ContainsFunc(t.Interrupts, func(it graph.PendingInterrupt) bool { return it.Node == NodeRefineGate })
	out := []workflow.Block{stage(s, t.Next, waiting)}
	about := []workflow.KV{{Key: "Request", Value: s.UserInput}}
	if s.ProductDoc != nil {
		about = append(about, workflow.KV{Key: "Site", Value: s.ProductDoc.Name}, workflow.KV{Key: "Audience", Value: s.ProductDoc.Audience})
	}
	if len(s.Pages) > 0 {
		var ps []string
		for _, p := range s.Pages {
			ps = append(ps, p.Title)
		}
		about = append(about, workflow.KV{Key: "Pages", Value: strings.Join(ps, ", ")})
	}
	if s.StyleTokens != nil {
		p := s.StyleTokens.Palette
		about = append(about, workflow.KV{Key: "Palette", Value: fmt.Sprintf("primary %s · secondary %s · accent %s · surface %s · text %s (from the %s)",
			p.Primary, p.Secondary, p.Accent, p.Surface, p.Text, s.StyleTokens.Source), Code: true})
	}
	model := workflow.KV{Key: "Model", Value: "a model"}
	if offline {
		model = workflow.KV{Key: "Model", Value: "offline: the brief, layout and feedback computed from your words, no model", Badge: "offline"}
	}
	out = append(out, workflow.KeyValues{Items: append(about, model)})
	if waiting {
		out = append(out, workflow.Notice{Kind: "info", Text: "refine_waiting: the pages are laid out. Say what to change in the feedback box above (or on the review's page), or answer \"no changes\" to build them."})
	}
	if s.Error != "" {
		out = append(out, workflow.Notice{Kind: "error", Text: s.Error})
	}
	if card := ScoreCard(s); card != nil {
		out = append(out, card)
	}
	if len(s.Refinements) > 0 {
		out = append(out, rounds(s.Refinements))
	}
	return out, nil
}

// stage says where the session is, with a bar over the main path.
func stage(s GraphState, next []string, waiting bool) workflow.Progress {
	done := 0
	for _, have := range []bool{s.ProductDoc != nil, s.StyleTokens != nil, s.ComponentRegistry != nil, len(s.PageSchemas) > 0} {
		if have {
			done++
		}
	}
	total := 6
	switch {
	case waiting:
		return workflow.Progress{Label: fmt.Sprintf("Waiting for your feedback (round %d)", len(s.Refinements)+1), Done: done + 1, Total: total}
	case len(next) == 0 && s.BuildStatus == BuildSucceeded:
		round := 1
		if s.BuildArtifacts != nil {
			round = s.BuildArtifacts.Round
		}
		return workflow.Progress{Label: fmt.Sprintf("Built: %d pages, build %d", len(s.BuildArtifacts.Pages), round), Done: total, Total: total}
	case len(next) == 0 && s.BuildStatus == BuildFailed:
		return workflow.Progress{Label: "The build failed", Done: total - 1, Total: total}
	case len(next) > 0:
		return workflow.Progress{Label: "Running " + strings.Join(next, ", ") + "…", Done: done, Total: total}
	}
	return workflow.Progress{Label: "Queued", Total: total}
}

// ScoreCard is the aesthetic check's card: the overall score and its four measures, the
// contrast of every text/background pair, and the suggestions (nil without scores).
func ScoreCard(s GraphState) workflow.Block {
	sc := s.AestheticScores
	if sc == nil {
		if s.AestheticEnabled || len(s.PageSchemas) == 0 {
			return nil
		}
		return workflow.Section{ID: "score-card", Title: "Aesthetic score", Blocks: []workflow.Block{
			workflow.Paragraph{Text: "The aesthetic check is off for this session.", Muted: true}}}
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
	blocks := []workflow.Block{workflow.Stats{Items: []workflow.Stat{{Label: "Overall", Value: f(sc.Overall)},
		{Label: "Contrast (WCAG AA)", Value: f(sc.Contrast.Score)}, {Label: "Type scale", Value: f(sc.TypeScale.Score)},
		{Label: "Spacing rhythm", Value: f(sc.Spacing.Score)}, {Label: "Line length", Value: f(sc.LineLength.Score)}}}}
	pairs := workflow.Table{Caption: "Contrast of each text/background pair", Columns: []workflow.Column{{Title: "Where", Type: workflow.ColWide},
		{Title: "Text", Type: workflow.ColCode}, {Title: "Background", Type: workflow.ColCode}, {Title: "Ratio", Type: workflow.ColNumber},
		{Title: "AA", Type: workflow.ColBadge}}}
	for _, p := range sc.Contrast.Pairs {
		verdict, class := "pass", "done"
		if !p.Pass {
			verdict, class = "below "+f(p.Min())+":1", "failed"
		}
		pairs.Rows = append(pairs.Rows, workflow.Row{Cells: []workflow.Cell{{Text: strings.Join(p.Uses, "; ")}, {Text: p.FGHex}, {Text: p.BGHex},
			{Text: strconv.FormatFloat(p.Ratio, 'f', 2, 64) + ":1"}, {Text: verdict, Badge: class}}})
	}
	blocks = append(blocks, pairs)
	if len(s.AestheticSuggestions) > 0 {
		blocks = append(blocks, workflow.Heading{Text: "Suggestions", Level: 3})
		for _, sg := range s.AestheticSuggestions {
			blocks = append(blocks, workflow.Paragraph{Text: "• " + sg.Message})
		}
	}
	return workflow.Section{ID: "score-card", Title: "Aesthetic score", Meta: "Measured on the style tokens and the page layouts, out of 100.", Blocks: blocks}
}

// rounds lists the refine rounds: the feedback, what was applied and what could not be.
func rounds(rs []Refinement) workflow.Block {
	t := workflow.Table{Columns: []workflow.Column{{Title: "Round", Type: workflow.ColNumber}, {Title: "Feedback", Type: workflow.ColWide},
		{Title: "Applied", Type: workflow.ColWide}, {Title: "Not applied", Type: workflow.ColWide}, {Title: "Score", Type: workflow.ColText}}}
	for _, r := range rs {
		var un []string
		for _, u := range r.Unapplied {
			un = append(un, fmt.Sprintf("%q: %s", u.Text, u.Reason))
		}
		score := ""
		if r.Scores != nil {
			score = fmt.Sprintf("%.1f → %.1f", r.Scores.Before, r.Scores.After)
		}
		applied := strings.Join(r.Applied, "; ")
		if applied == "" {
			applied = "nothing"
		}
		t.Rows = append(t.Rows, workflow.Row{ID: "round-" + strconv.Itoa(r.Round), Cells: []workflow.Cell{{Text: strconv.Itoa(r.Round)},
			{Text: r.Feedback}, {Text: applied}, {Text: strings.Join(un, "; ")}, {Text: score}}})
	}
	return workflow.Section{ID: "rounds", Title: "Rounds of feedback", Meta: "Each round's feedback, what refine applied and what it could not (never dropped silently).",
		Blocks: []workflow.Block{t}}
}

// Report is the built site: the .zip, each page previewed at desktop and phone widths (from
// the sandboxed artifact path), the colours render changed to reach WCAG AA, and what the
// last round could not apply.
func Report(_ context.Context, t workflow.Thread) ([]workflow.Block, error) {
	s, err := workflow.DecodeState[GraphState](t.State)
	if err != nil || s.BuildArtifacts == nil {
		return nil, err
	}
	a := s.BuildArtifacts
	out := []workflow.Block{workflow.Stats{Items: []workflow.Stat{{Label: "Pages", Value: strconv.Itoa(len(a.Pages))},
		{Label: "Build", Value: strconv.Itoa(a.Round)}, {Label: "Rounds of feedback", Value: strconv.Itoa(len(s.Refinements))}}}}
	if s.BuildStatus == BuildFailed {
		out = append(out, workflow.Notice{Kind: "error", Text: "The last build failed: " + s.Error + " The pages below are the previous build's."})
	}
	if a.Zip != nil {
		out = append(out, workflow.Downloads{Items: []workflow.Download{{Key: a.Zip.Key, Label: "Download the site (" + a.Zip.File + ")"}}})
	}
	if n := len(s.Refinements); n > 0 && len(s.Refinements[n-1].Unapplied) > 0 {
		var un []string
		for _, u := range s.Refinements[n-1].Unapplied {
			un = append(un, fmt.Sprintf("%q (%s)", u.Text, u.Reason))
		}
		out = append(out, workflow.Notice{Kind: "warn", Text: "Not applied from your last feedback: " + strings.Join(un, "; ") + "."})
	}
	if len(a.Fixes) > 0 {
		fx := workflow.Table{Caption: "Colours changed to reach WCAG AA", Columns: []workflow.Column{{Title: "Token", Type: workflow.ColCode},
			{Title: "From", Type: workflow.ColCode}, {Title: "To", Type: workflow.ColCode}, {Title: "Pair", Type: workflow.ColWide},
			{Title: "Contrast", Type: workflow.ColText}}}
		for _, f := range a.Fixes {
			fx.Rows = append(fx.Rows, workflow.Row{Cells: []workflow.Cell{{Text: f.Token}, {Text: f.From}, {Text: f.To}, {Text: f.Pair},
				{Text: fmt.Sprintf("%.2f:1 → %.2f:1", f.Before, f.After)}}})
		}
		out = append(out, fx)
	}
	for _, p := range a.Pages {
		out = append(out, workflow.PagePreview{Key: p.Key, Title: p.Title + " (" + p.File + ")"})
	}
	return out, nil
}
