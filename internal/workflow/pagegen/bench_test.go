package pagegen_test

import (
	"strconv"
	"testing"

	"weft/internal/workflow/pagegen"
)

// BenchmarkSession is a whole session's wall time on the offline provider and the
// in-memory saver: start, pause for feedback, one refine round, build (the first demo:
// five pages after its feedback).
func BenchmarkSession(b *testing.B) {
	d := pagegen.Demos()[0]
	bn := setup(b)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		d.Session = "bench-" + strconv.Itoa(i)
		if s := runDemo(b, bn, d); len(s.BuildArtifacts.Pages) != 5 {
			b.Fatalf("built %d pages", len(s.BuildArtifacts.Pages))
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/session")
}
