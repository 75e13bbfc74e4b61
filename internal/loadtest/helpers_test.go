package loadtest_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"weft/internal/app"
	"weft/internal/auth"
	"weft/internal/llm"
	"weft/internal/postgres/pgtest"
	"weft/internal/runner"
	"weft/internal/server"
)

// Environment of the server child process (BenchmarkIdleSSEClients).
const (
	envServer = "WEFT_LOADTEST_SERVER" // "1": this process is the server child
	envDB     = "WEFT_LOADTEST_DB"
)

func TestMain(m *testing.M) {
	if os.Getenv(envServer) == "1" {
		serverChild()
		return
	}
	pgtest.Main(m)
}

// bundle is an App on a fresh database with the demo loaded, served on 127.0.0.1.
type bundle struct {
	App  *app.App
	Auth *auth.Service
	URL  string // the database
	Base string // the server, http://127.0.0.1:port
}

// openApp opens an App on a fresh database and loads the demo (data, users, three
// evaluations queued). Workers do not run.
func openApp(b *testing.B, dbURL string) (*app.App, *auth.Service) {
	b.Helper()
	a, err := app.Open(context.Background(), app.Config{DatabaseURL: dbURL, LLM: llm.NewOffline(), Runner: runner.Config{
		PollInterval: 50 * time.Millisecond}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(a.Close)
	authSvc := auth.New(a.DB, auth.Options{HashCost: bcrypt.MinCost})
	if _, err := a.SeedDemoAll(context.Background(), authSvc); err != nil {
		b.Fatal(err)
	}
	return a, authSvc
}

// setup is openApp served by a real HTTP server on 127.0.0.1.
func setup(b *testing.B) bundle {
	b.Helper()
	dbURL := pgtest.URL(b)
	a, authSvc := openApp(b, dbURL)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: server.New(server.Config{App: a, Auth: authSvc, LoginRate: 1e6}).Handler(),
		ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	b.Cleanup(func() { _ = srv.Close() })
	return bundle{App: a, Auth: authSvc, URL: dbURL, Base: "http://" + ln.Addr().String()}
}

// login signs in as a demo user and returns the Cookie header of the session.
func login(b *testing.B, base, email string) string {
	b.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.Get(base + "/login")
	if err != nil {
		b.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	u, _ := url.Parse(base)
	var csrf string
	for _, ck := range jar.Cookies(u) {
		if ck.Name == "weft_csrf" {
			csrf = ck.Value
		}
	}
	res, err = c.PostForm(base+"/login", url.Values{"email": {email}, "password": {auth.DemoPassword}, "_csrf": {csrf}})
	if err != nil {
		b.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther {
		b.Fatalf("login as %s: %d", email, res.StatusCode)
	}
	var parts []string
	for _, ck := range jar.Cookies(u) {
		parts = append(parts, ck.Name+"="+ck.Value)
	}
	return strings.Join(parts, "; ")
}

// checkPage fails unless GET path answers 200 with want in the body.
func checkPage(b *testing.B, base, cookie, path, want string) {
	b.Helper()
	if body := pageBody(b, base, cookie, path); !strings.Contains(body, want) {
		b.Fatalf("GET %s: %d bytes, want %q in them", path, len(body), want)
	}
}

// pageBody is the body of GET path, which must answer 200.
func pageBody(b *testing.B, base, cookie, path string) string {
	b.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+path, nil)
	req.Header.Set("Cookie", cookie)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		b.Fatalf("GET %s: %d, want 200", path, res.StatusCode)
	}
	return string(body)
}

// loadResult is what a load run measured.
type loadResult struct {
	Tool          string
	Requests      int
	RPS           float64
	P50, P90, P99 time.Duration
}

func (r loadResult) String() string {
	return fmt.Sprintf("%s: %d requests, %.0f req/s, p50 %.2f ms, p90 %.2f ms, p99 %.2f ms", r.Tool, r.Requests, r.RPS,
		ms(r.P50), ms(r.P90), ms(r.P99))
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// load runs wrk (or, without wrk, a Go load generator) against url for d with conns
// connections, sending cookie.
func load(b *testing.B, url, cookie string, d time.Duration, conns int) loadResult {
	b.Helper()
	if _, err := exec.LookPath("wrk"); err != nil {
		return goLoad(b, url, cookie, d, conns)
	}
	return wrk(b, url, cookie, d, conns)
}

var (
	wrkPct      = regexp.MustCompile(`(?m)^\s+(50|90|99)%\s+([\d.]+)(us|ms|s)\s*$`)
	wrkRequests = regexp.MustCompile(`(?m)^\s*(\d+) requests in`)
	wrkRPS      = regexp.MustCompile(`(?m)^Requests/sec:\s+([\d.]+)`)
	wrkBad      = regexp.MustCompile(`(?m)^\s*(Non-2xx or 3xx responses|Socket errors):.*$`)
)

// wrk runs wrk --latency and parses its latency distribution.
func wrk(b *testing.B, url, cookie string, d time.Duration, conns int) loadResult {
	b.Helper()
	out, err := exec.Command("wrk", "--latency", "-t"+strconv.Itoa(min(2, conns)), "-c"+strconv.Itoa(conns), "-d"+strconv.Itoa(int(d.Seconds()))+"s",
		"--timeout", "10s", "-H", "Cookie: "+cookie, url).CombinedOutput()
	if err != nil {
		b.Fatalf("wrk: %v\n%s", err, out)
	}
	s := string(out)
	if m := wrkBad.FindString(s); m != "" {
		b.Fatalf("wrk %s: %s\n%s", url, strings.TrimSpace(m), s)
	}
	r := loadResult{Tool: "wrk"}
	for _, m := range wrkPct.FindAllStringSubmatch(s, -1) {
		v, _ := strconv.ParseFloat(m[2], 64)
		unit := map[string]time.Duration{"us": time.Microsecond, "ms": time.Millisecond, "s": time.Second}[m[3]]
		dur := time.Duration(v * float64(unit))
		switch m[1] {
		case "50":
			r.P50 = dur
		case "90":
			r.P90 = dur
		case "99":
			r.P99 = dur
		}
	}
	if m := wrkRequests.FindStringSubmatch(s); m != nil {
		r.Requests, _ = strconv.Atoi(m[1])
	}
	if m := wrkRPS.FindStringSubmatch(s); m != nil {
		r.RPS, _ = strconv.ParseFloat(m[1], 64)
	}
	if r.P99 == 0 || r.Requests == 0 {
		b.Fatalf("wrk output not understood:\n%s", s)
	}
	return r
}

// goLoad is the fallback load generator: conns goroutines each sending GETs back to back
// for d (closed loop, like wrk).
func goLoad(b *testing.B, url, cookie string, d time.Duration, conns int) loadResult {
	b.Helper()
	tr := &http.Transport{MaxIdleConnsPerHost: conns, DisableCompression: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	var mu sync.Mutex
	var lat []time.Duration
	var failed error
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	for range conns {
		wg.Go(func() {
			var mine []time.Duration
			for time.Now().Before(deadline) {
				start := time.Now()
				if err := get(client, url, cookie); err != nil {
					mu.Lock()
					failed = errors.Join(failed, err)
					mu.Unlock()
					return
				}
				mine = append(mine, time.Since(start))
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	if failed != nil {
		b.Fatalf("load %s: %v", url, failed)
	}
	slices.Sort(lat)
	return loadResult{Tool: "go (wrk not found)", Requests: len(lat), RPS: float64(len(lat)) / d.Seconds(),
		P50: pct(lat, 50), P90: pct(lat, 90), P99: pct(lat, 99)}
}

// loadAtRate sends GETs of url at a fixed rate for d, each on time whether or not the ones
// before it have answered (an open loop, unlike wrk's closed one), and measures each from
// the moment it was due, so a stall counts against every request it delays. Below
// saturation this is the latency a page's users see, not the queue that a closed loop with
// more connections than cores builds up.
func loadAtRate(b *testing.B, url, cookie string, d time.Duration, rate float64) loadResult {
	b.Helper()
	tr := &http.Transport{MaxIdleConnsPerHost: 256, DisableCompression: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	n := int(d.Seconds() * rate)
	lat := make([]time.Duration, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range n {
		due := start.Add(time.Duration(float64(i) / rate * float64(time.Second)))
		time.Sleep(time.Until(due))
		wg.Go(func() {
			errs[i] = get(client, url, cookie)
			lat[i] = time.Since(due)
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err := errors.Join(errs...); err != nil {
		b.Fatalf("load %s: %v", url, err)
	}
	slices.Sort(lat)
	return loadResult{Tool: fmt.Sprintf("go, open loop at %.0f req/s", rate), Requests: n, RPS: float64(n) / elapsed.Seconds(),
		P50: pct(lat, 50), P90: pct(lat, 90), P99: pct(lat, 99)}
}

// get sends GET url with cookie and reads the whole answer, which must be a 200.
func get(client *http.Client, url, cookie string) error {
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Cookie", cookie)
	res, err := client.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", res.StatusCode)
	}
	return nil
}

// pct is the p-th percentile of sorted durations.
func pct(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*p/100+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// raiseFDLimit raises the soft limit of open files to the hard limit and returns it.
func raiseFDLimit() (uint64, error) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, err
	}
	lim.Cur = lim.Max
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, err
	}
	return lim.Cur, nil
}

// procStatus reads a kB field (VmRSS, VmHWM) of /proc/<pid>/status, in MiB.
func procStatus(pid int, field string) (float64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kb / 1024, err
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, pid)
}
