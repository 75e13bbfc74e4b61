package durable_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"weft/internal/app"
	"weft/internal/auth"
	"weft/internal/llm"
	"weft/internal/postgres/pgtest"
	"weft/internal/runner"
	"weft/internal/server"
	cr "weft/internal/workflow/contractreview"
)

// Environment of the server process TestKilledMidClause starts (TestCrashServerProcess).
const (
	envServer      = "CR_SERVER"
	envDB          = "CR_DB"
	envStallTask   = "CR_STALL_TASK"   // the model call that never answers…
	envStallClause = "CR_STALL_CLAUSE" // …when asked about this clause
	readyPrefix    = "CR_READY "
	stalledPrefix  = "CR_STALLED "
)

// The model calls of the review (contractreview's llm.Tasks).
const (
	taskRisks   = "contractreview.clause_risks"
	taskRedline = "contractreview.clause_redline"
)

// stall is the offline provider, but one call (a task about a clause) never answers: it
// says so on stdout and waits to be killed.
type stall struct {
	llm.Provider
	task, clause string
}

func (s stall) Chat(ctx context.Context, req llm.ChatRequest) (llm.ChatResponse, error) {
	if req.Task == s.task && len(req.Messages) > 1 && strings.Contains(req.Messages[1].Content, `"clause_id":"`+s.clause+`"`) {
		fmt.Printf("%s%s %s\n", stalledPrefix, s.task, s.clause)
		<-ctx.Done()
		return llm.ChatResponse{}, ctx.Err()
	}
	return s.Provider.Chat(ctx, req)
}

// TestCrashServerProcess is the process TestKilledMidClause kills: a weft serve (console,
// API and workers) on CR_DB whose model stalls on one clause. It runs until killed, or until
// its stdin closes.
func TestCrashServerProcess(t *testing.T) {
	if os.Getenv(envServer) != "1" {
		t.Skip("the server process of TestKilledMidClause; runs only when that test starts it")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	a, err := app.Open(ctx, app.Config{DatabaseURL: os.Getenv(envDB),
		LLM:    stall{Provider: llm.NewOffline(), task: os.Getenv(envStallTask), clause: os.Getenv(envStallClause)},
		Runner: runner.Config{Lease: time.Second, RescueEvery: 300 * time.Millisecond, PollInterval: 50 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	srv := httptest.NewServer(server.New(server.Config{App: a, Auth: auth.New(a.DB, auth.Options{HashCost: bcrypt.MinCost})}).Handler())
	defer srv.Close()
	fmt.Println(readyPrefix + srv.URL)
	_ = a.RunWorkers(ctx)
}

// proc is a server process.
type proc struct {
	cmd   *exec.Cmd
	lines chan string
	url   string
	log   string
}

// startServer starts a server process whose model stalls on task for clause.
func startServer(t *testing.T, url, task, clause string) *proc {
	t.Helper()
	p := &proc{lines: make(chan string, 64), log: filepath.Join(t.TempDir(), "server.log")}
	logf, err := os.Create(p.log)
	if err != nil {
		t.Fatal(err)
	}
	p.cmd = exec.Command(os.Args[0], "-test.run=^TestCrashServerProcess$", "-test.count=1", "-test.v")
	p.cmd.Env = append(os.Environ(), envServer+"=1", envDB+"="+url, envStallTask+"="+task, envStallClause+"="+clause)
	p.cmd.Stderr = logf
	out, _ := p.cmd.StdoutPipe()
	if _, err := p.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			fmt.Fprintln(logf, sc.Text())
			p.lines <- sc.Text()
		}
		close(p.lines)
	}()
	t.Cleanup(p.kill)
	p.url = strings.TrimPrefix(p.await(t, readyPrefix), readyPrefix)
	return p
}

// await waits for a line of the process's output that begins with prefix.
func (p *proc) await(t *testing.T, prefix string) string {
	t.Helper()
	deadline := time.After(90 * time.Second)
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				b, _ := os.ReadFile(p.log)
				t.Fatalf("the server process ended before %q:\n%s", prefix, b)
			}
			if strings.HasPrefix(l, prefix) {
				return l
			}
		case <-deadline:
			t.Fatalf("no %q from the server process", prefix)
		}
	}
}

// kill ends the process with SIGKILL: no deferred call, no lease given back.
func (p *proc) kill() {
	if p.cmd.ProcessState == nil {
		_ = p.cmd.Process.Kill()
		_ = p.cmd.Wait()
	}
}

// crashContract has a clause with two changes (17.6: the cap, sized with 1.1's price, and
// the claim notice) and a clause with one (20.1).
const crashContract = `1.1 Definitions
"Contract Price" means USD 20,000,000, subject to adjustment under the Contract.
17.6 Limitation of Liability
The total liability of the Employer to the Contractor shall not exceed 10% of the Contract Price. The Contractor shall give notice of any claim within 14 days.
20.1 Contractor's Claims
The Contractor shall give notice of a claim within 14 days after becoming aware of the event.
`

// TestKilledMidClause: the server process running a review is killed with SIGKILL in the
// middle of a clause, twice: while drafting 17.6's changes, and, after a reviewer's
// decisions on 17.6 were recorded, while analysing 20.1. Each time another process rescues
// the job once its lease runs out, and the review resumes at the clause it was in, from its
// last checkpoint: no clause analysed twice, no change proposed twice, the decisions applied
// once.
func TestKilledMidClause(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts and kills server processes")
	}
	url := pgtest.URL(t)
	k := open(t, url, nil, false) // reads state and answers the API; runs no job until the end
	seedUsers(t, k.app, k.auth)
	ctx := context.Background()
	token := func() string {
		tok, err := k.auth.IssueAPIToken(ctx, app.DemoTenant, fmt.Sprintf("crash-%d", time.Now().UnixNano()), auth.Admin, "test")
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}

	// 1. The first process starts the review and is killed while drafting 17.6's changes.
	p1 := startServer(t, url, taskRedline, "17.6")
	thread := api{t: t, base: p1.url, token: token()}.start("contract.txt", []byte(crashContract), map[string]any{cr.FieldOurParty: "Contractor"})
	p1.await(t, stalledPrefix)
	p1.kill()
	snap := k.snapshot(thread)
	if snap.Values.CurrentClauseID != "17.6" || !slices.Equal(snap.Next, []string{cr.NodeGenerateDiffs}) {
		t.Fatalf("killed at clause %s, next %v; want 17.6's drafting", snap.Values.CurrentClauseID, snap.Next)
	}

	// 2. A second process rescues the job: 17.6 is drafted again from its checkpoint and
	// pauses with its two changes, once each.
	p2 := startServer(t, url, taskRisks, "20.1")
	j := k.waitThread(thread, runner.WaitingReview)
	s := k.snapshot(thread).Values
	if s.CurrentClauseID != "17.6" || s.CurrentClauseIndex != 1 || len(s.Findings) != 1 || len(s.PendingDiffs) != 2 || len(s.CurrentDiffs) != 2 {
		t.Fatalf("after the rescue: clause %s (index %d), findings %d, pending %d, current %d", s.CurrentClauseID, s.CurrentClauseIndex,
			len(s.Findings), len(s.PendingDiffs), len(s.CurrentDiffs))
	}
	if ids := diffIDs(s.PendingDiffs); ids[0] == ids[1] {
		t.Fatalf("a change proposed twice: %v", ids)
	}
	capDiff, notice := s.PendingDiffs[0], s.PendingDiffs[1]
	// The decisions are recorded by the second process, which then runs on, into 20.1, and
	// is killed there.
	rev := api{t: t, base: p2.url, token: token()}
	if code, body := rev.decide(thread, reviewerID, map[string]any{"items": map[string]any{
		capDiff.DiffID: map[string]string{"decision": "approve"}, notice.DiffID: map[string]string{"decision": "reject"}}}); code != http.StatusAccepted {
		t.Fatalf("decide 17.6: %d %v", code, body)
	}
	p2.await(t, stalledPrefix)
	p2.kill()
	snap = k.snapshot(thread)
	if snap.Values.CurrentClauseIndex != 2 || !snap.Values.Findings["17.6"].Completed || !slices.Equal(snap.Next, []string{cr.NodeClauseAnalyze}) {
		t.Fatalf("killed at index %d, next %v, 17.6 %+v; want 20.1's analysis", snap.Values.CurrentClauseIndex, snap.Next, snap.Values.Findings["17.6"])
	}

	// 3. This process's workers rescue it: 20.1 is analysed, pauses, and the review ends.
	wctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = k.app.RunWorkers(wctx) }()
	t.Cleanup(func() { stop(); <-done })
	k.waitThread(thread, runner.WaitingReview)
	s = k.snapshot(thread).Values
	if s.CurrentClauseID != "20.1" || len(s.PendingDiffs) != 1 {
		t.Fatalf("after the second rescue: clause %s, pending %+v", s.CurrentClauseID, s.PendingDiffs)
	}
	last := s.PendingDiffs[0]
	local := api{t: t, base: k.base, token: token()}
	if code, body := local.decide(thread, reviewerID, map[string]any{"decision": cr.DecisionApproveAll}); code != http.StatusAccepted {
		t.Fatalf("approve 20.1: %d %v", code, body)
	}
	k.waitThread(thread, runner.Succeeded)

	s = k.snapshot(thread).Values
	if got, want := diffIDs(s.AllDiffs), []string{capDiff.DiffID, last.DiffID}; !slices.Equal(got, want) {
		t.Errorf("all_diffs = %v, want %v: the approved changes, each once", got, want)
	}
	if f := s.Findings["17.6"]; len(f.Diffs) != 1 || len(f.Rejected) != 1 || f.Proposed != 2 || len(s.Findings) != 3 || len(s.AllRisks) != 3 {
		t.Errorf("findings %d, 17.6 %+v, all_risks %d", len(s.Findings), f, len(s.AllRisks))
	}
	path := k.visited(thread)
	for node, want := range map[string]int{cr.NodeClauseAnalyze: 3, cr.NodeGenerateDiffs: 3, cr.NodeHumanApproval: 2, cr.NodeSaveClause: 3, cr.NodeSummarize: 1} {
		if got := count(path, node); got != want {
			t.Errorf("%s in %d checkpoints, want %d: %v", node, got, want, path)
		}
	}
	ds, err := k.app.Jobs.ReviewDecisions(ctx, app.DemoTenant, j.ID)
	if err != nil || len(ds) != 2 {
		t.Errorf("recorded decisions %d (%v), want 2", len(ds), err)
	}
	final, err := k.app.Jobs.Job(ctx, app.DemoTenant, j.ID)
	if err != nil || final.Status != runner.Succeeded {
		t.Errorf("job %s: %s (%v)", j.ID, final.Status, err)
	}
}
