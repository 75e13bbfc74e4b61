package server_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"weft/internal/runner"
	"weft/internal/server"
)

// A scraper asking for gzip (as Prometheus does) reads the metrics after one decompression.
func TestMetricsScrape(t *testing.T) {
	t.Parallel()
	k := newKit(t)
	k.work()
	k.waitJob("ev_demo-harbor", runner.Failed)
	// Go's client asks for gzip and decompresses once, like a scraper.
	res, body := k.anonymous().get("/metrics")
	if res.StatusCode != http.StatusOK || !res.Uncompressed {
		t.Fatalf("/metrics: %d, compressed answer %v", res.StatusCode, res.Uncompressed)
	}
	// Every status of every workflow has a series, 0 when it has no job (a series that
	// vanished at 0 reads as no data to an alert); so does every workflow's queue depth.
	for _, want := range []string{`weft_jobs{status="failed",tenant="demo",workflow="bid_evaluation"} 1`, "weft_node_latency_seconds_bucket",
		`weft_jobs{status="dlq_pending",tenant="demo",workflow="tour"} 0`, `weft_jobs{status="failed",tenant="acme",workflow="bid_evaluation"} 0`,
		`weft_queue_depth{workflow="tour"} 0`} {
		if !strings.Contains(body, want) {
			t.Fatalf("/metrics lacks %q:\n%.600s", want, body)
		}
	}
}

// With a metrics token set (WEFT_METRICS_TOKEN), only a scraper that sends it reads them.
func TestMetricsToken(t *testing.T) {
	t.Parallel()
	k := newKit(t)
	srv := httptest.NewServer(server.New(server.Config{App: k.App, Auth: k.Auth, MetricsToken: "s3cret"}).Handler())
	t.Cleanup(srv.Close)
	get := func(auth string) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/metrics", nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	for _, auth := range []string{"", "Bearer nope", "s3cret", "Basic s3cret"} {
		if code, body := get(auth); code != http.StatusUnauthorized || strings.Contains(body, "weft_jobs") {
			t.Errorf("Authorization %q: %d, want 401 and no metrics", auth, code)
		}
	}
	if code, body := get("bearer s3cret"); code != http.StatusOK || !strings.Contains(body, "weft_jobs") {
		t.Fatalf("with the token: %d", code)
	}
}
