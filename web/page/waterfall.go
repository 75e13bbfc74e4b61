package page

import "strconv"

// WaterfallVM is the waterfall of a thread's newest run, drawn from its node records: one
// row per node execution placed on the run's time axis, the waits between them (for a
// review, before a retry) as rows of their own, each attempt of the job under its header.
// Bars are SVG (the page's content security policy allows no inline style).
type WaterfallVM struct {
	Job   string // short job id
	Total string // the run's span, e.g. "3.2 s"
	Ticks []WaterfallTick
	Rows  []WaterfallRow
}

// WaterfallTick labels the time axis at X (per mille of the span).
type WaterfallTick struct {
	X     float64
	Label string
}

// WaterfallRow is one row: a header (Kind "attempt"), a node execution (Kind done, failed,
// interrupted, cached) or a wait (Kind "review" or "backoff").
type WaterfallRow struct {
	Kind  string
	Label string
	Note  string
	// X and W place the bar on the axis, in per mille of the run's span.
	X, W float64
	// Parallel: the execution overlapped another of its attempt (a branch of a fan-out).
	Parallel bool
	Title    string // the bar's tooltip: offset and duration
}

// Bar reports whether the row has a bar (headers have none).
func (r WaterfallRow) Bar() bool { return r.Kind != "attempt" }

// waterfallNum formats a bar coordinate for SVG.
func waterfallNum(f float64) string { return strconv.FormatFloat(f, 'f', 2, 64) }
