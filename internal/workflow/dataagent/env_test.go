package dataagent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"weft/internal/checkpoint"
	"weft/internal/graph"
	"weft/internal/llm"
	"weft/internal/postgres/pgtest"
	"weft/internal/workflow/dataagent"
	"weft/internal/workflow/dataagent/dataagentpg"
	"weft/internal/workflow/dataagent/nlsql"
	"weft/internal/workflow/workflowtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// asOf is when every test question is asked; the demo's orders end the day
// before 2026-01-01.
var asOf = time.Date(2026, 1, 15, 10, 30, 0, 0, time.UTC)

// demoPool is a fresh database with the demo data set in schema analytics.
func demoPool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, pgtest.URL(t))
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(pool.Close)
	if err := dataagentpg.InstallDemo(ctx, pool, dataagentpg.Demo{Schema: "analytics", End: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}); err != nil {
		t.Fatalf("install demo: %v", err)
	}
	return pool
}

// agent is a compiled data agent over the demo with the in-memory
// checkpointer and artifact store.
type agent struct {
	g         *graph.Graph[dataagent.State]
	artifacts *workflowtest.Artifacts
	pool      *pgxpool.Pool
}

func newAgent(t testing.TB, pool *pgxpool.Pool, tweak func(*dataagent.Deps)) agent {
	t.Helper()
	a := agent{artifacts: workflowtest.NewArtifacts(), pool: pool}
	d := dataagent.Deps{
		Catalog: dataagentpg.NewCatalog(pool), Evidence: dataagentpg.NewNotes(pool), SQL: dataagentpg.NewExecutor(pool),
		LLM: llm.NewOffline(), Artifacts: a.artifacts, Checkpointer: checkpoint.NewMemory(), Now: func() time.Time { return asOf },
	}
	if tweak != nil {
		tweak(&d)
	}
	g, err := dataagent.New(d)
	if err != nil {
		t.Fatalf("new: %v", err)
	}
	a.g = g
	return a
}

// ask starts a turn on thread and runs it until it ends or pauses.
func (a agent) ask(t testing.TB, thread, question string, review bool) graph.Result[dataagent.State] {
	t.Helper()
	res, err := a.g.Invoke(context.Background(), graph.Config{ThreadID: thread}, graph.Update(dataagent.Input(question, "analytics", review)...))
	if err != nil {
		t.Fatalf("%s: %v", question, err)
	}
	return res
}

// answer is the result of the turn's last successful sql step.
func answer(t testing.TB, s dataagent.State) (*dataagent.ResultSet, string) {
	t.Helper()
	for i := len(s.Steps) - 1; i >= 0; i-- {
		if st := s.Steps[i]; st.Tool == dataagent.ToolSQL && st.Status == dataagent.StepDone {
			return st.Result, st.SQL
		}
	}
	return nil, ""
}

// handRows runs a hand-written query and returns its rows as text.
func handRows(t testing.TB, pool *pgxpool.Pool, sql string) [][]string {
	t.Helper()
	conn, err := pool.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	res := conn.Conn().PgConn().ExecParams(context.Background(), sql, nil, nil, nil, nil).Read()
	if res.Err != nil {
		t.Fatalf("hand-written query: %v\n%s", res.Err, sql)
	}
	out := [][]string{}
	for _, r := range res.Rows {
		row := make([]string, len(r))
		for i, v := range r {
			row[i] = string(v)
		}
		out = append(out, row)
	}
	return out
}

// sameNumbers compares results cell by cell; numbers match within 0.00005.
func sameNumbers(got, want [][]string) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d rows, want %d", len(got), len(want))
	}
	for i := range got {
		if len(got[i]) != len(want[i]) {
			return fmt.Errorf("row %d has %d cells, want %d", i+1, len(got[i]), len(want[i]))
		}
		for j := range got[i] {
			a, errA := strconv.ParseFloat(got[i][j], 64)
			b, errB := strconv.ParseFloat(want[i][j], 64)
			switch {
			case errA == nil && errB == nil:
				if math.Abs(a-b) > 0.00005 {
					return fmt.Errorf("row %d cell %d is %s, want %s", i+1, j+1, got[i][j], want[i][j])
				}
			case got[i][j] != want[i][j]:
				return fmt.Errorf("row %d cell %d is %q, want %q", i+1, j+1, got[i][j], want[i][j])
			}
		}
	}
	return nil
}

// scripted is a provider that gives queued answers to named tasks, and
// otherwise the offline answer; it records every request.
type scripted struct {
	mu      sync.Mutex
	answers map[string][]string
	seen    map[string][]string // task → user messages
}

var _ llm.Provider = (*scripted)(nil)

func newScripted(answers map[string][]any) *scripted {
	s := &scripted{answers: map[string][]string{}, seen: map[string][]string{}}
	for task, as := range answers {
		for _, a := range as {
			b, _ := json.Marshal(a)
			s.answers[task] = append(s.answers[task], string(b))
		}
	}
	return s
}

func (s *scripted) Name() string  { return "scripted" }
func (s *scripted) Offline() bool { return true }
func (s *scripted) ScoreCriteria(context.Context, llm.ScoreRequest) (llm.ScoreResult, error) {
	return llm.ScoreResult{}, fmt.Errorf("not used")
}

func (s *scripted) Chat(ctx context.Context, req llm.ChatRequest) (llm.ChatResponse, error) {
	s.mu.Lock()
	user := ""
	for _, m := range req.Messages {
		if m.Role == "user" {
			user = m.Content
		}
	}
	s.seen[req.Task] = append(s.seen[req.Task], user)
	if q := s.answers[req.Task]; len(q) > 0 {
		s.answers[req.Task] = q[1:]
		s.mu.Unlock()
		return llm.ChatResponse{Content: q[0]}, nil
	}
	s.mu.Unlock()
	out, err := req.Offline(ctx)
	return llm.ChatResponse{Content: out}, err
}

func (s *scripted) requests(task string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.seen[task]...)
}

// run is one Invoke, streamed: the result, the nodes that ran in order, and
// the report chunks streamed.
type run struct {
	res    graph.Result[dataagent.State]
	nodes  []string
	chunks []dataagent.ReportChunk
}

func (a agent) stream(t testing.TB, thread string, in graph.Command) run {
	t.Helper()
	var r run
	for ev, err := range a.g.Stream(context.Background(), graph.Config{ThreadID: thread}, in, graph.ModeTasks|graph.ModeCustom) {
		if err != nil {
			t.Fatalf("run: %v", err)
		}
		switch ev.Kind {
		case graph.KindTaskStart:
			r.nodes = append(r.nodes, ev.Data.(graph.TaskStart).Node)
		case graph.KindCustom:
			if c, ok := ev.Data.(dataagent.ReportChunk); ok {
				r.chunks = append(r.chunks, c)
			}
		case graph.KindDone:
			r.res = ev.Data.(graph.Result[dataagent.State])
		}
	}
	return r
}

func (a agent) start(t testing.TB, thread, question string, review bool) run {
	t.Helper()
	return a.stream(t, thread, graph.Update(dataagent.Input(question, "analytics", review)...))
}

func count(nodes []string, name string) int {
	n := 0
	for _, x := range nodes {
		if x == name {
			n++
		}
	}
	return n
}

// Collaborators that are never called, for building the graph alone.
type (
	nopCatalog  struct{}
	nopEvidence struct{}
	nopSQL      struct{}
)

func (nopCatalog) ReadCatalog(context.Context, string) (nlsql.Catalog, error) {
	return nlsql.Catalog{}, nil
}
func (nopEvidence) SearchNotes(context.Context, string, string, int) ([]nlsql.Note, error) {
	return nil, nil
}
func (nopSQL) Query(context.Context, string, string) (dataagent.ResultSet, error) {
	return dataagent.ResultSet{}, nil
}
