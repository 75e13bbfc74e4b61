package server_test

import (
	"net/http"
	"strings"
	"testing"

	"weft/internal/runner"
)

// A scraper asking for gzip (as Prometheus does) reads the metrics after one decompression.
func TestMetricsScrape(t *testing.T) {
	t.Parallel()
	k := newKit(t)
	k.work()
	k.waitJob("ev_demo-crestline", runner.Failed)
	// Go's client asks for gzip and decompresses once, like a scraper.
	res, body := k.anonymous().get("/metrics")
	if res.StatusCode != http.StatusOK || !res.Uncompressed {
		t.Fatalf("/metrics: %d, compressed answer %v", res.StatusCode, res.Uncompressed)
	}
	for _, want := range []string{`weft_jobs{status="failed",tenant="demo",workflow="bid_evaluation"} 1`, "weft_node_latency_seconds_bucket"} {
		if !strings.Contains(body, want) {
			t.Fatalf("/metrics lacks %q:\n%.600s", want, body)
		}
	}
}
