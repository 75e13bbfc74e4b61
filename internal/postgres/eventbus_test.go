package postgres_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"weft/internal/graph"
	"weft/internal/postgres"
	"weft/internal/postgres/pgtest"
)

// busBundle is one test's database and event bus (closed at cleanup).
type busBundle struct {
	db  *postgres.DB
	url string
	bus *postgres.EventBus
	ctx context.Context
}

func setupBus(t *testing.T, o postgres.EventBusOptions) busBundle {
	t.Helper()
	url := pgtest.URL(t)
	d, err := postgres.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	bus := postgres.NewEventBus(d, o)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := bus.Close(ctx); err != nil {
			t.Errorf("close bus: %v", err)
		}
		d.Close()
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return busBundle{db: d, url: url, bus: bus, ctx: ctx}
}

// ev makes a distinguishable event of a thread: step i, data {"i": i}.
func ev(thread string, i int) graph.Event {
	return graph.Event{Kind: graph.KindUpdates, Thread: thread, Step: i, Node: "n" + strconv.Itoa(i%3),
		TaskID: "task-" + strconv.Itoa(i), At: time.Now(), Data: map[string]int{"i": i}}
}

// waitWritten waits until the bus has written n events in all.
func waitWritten(t *testing.T, bus *postgres.EventBus, n uint64) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for bus.Stats().Rows < n {
		if time.Now().After(deadline) {
			t.Fatalf("bus wrote %+v, want %d rows", bus.Stats(), n)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// recv reads n events from ch, failing after timeout.
func recv(t *testing.T, ch <-chan postgres.StoredEvent, n int, timeout time.Duration) []postgres.StoredEvent {
	t.Helper()
	out := make([]postgres.StoredEvent, 0, n)
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for len(out) < n {
		select {
		case e, ok := <-ch:
			if !ok {
				t.Fatalf("subscription closed after %d of %d events", len(out), n)
			}
			out = append(out, e)
		case <-timer.C:
			t.Fatalf("received %d of %d events in %v", len(out), n, timeout)
		}
	}
	return out
}

// quiet checks that ch delivers nothing for d.
func quiet(t *testing.T, ch <-chan postgres.StoredEvent, d time.Duration) {
	t.Helper()
	select {
	case e := <-ch:
		t.Fatalf("unexpected event %+v", e)
	case <-time.After(d):
	}
}

// dataI decodes the "i" of an event's data.
func dataI(t *testing.T, e postgres.StoredEvent) int {
	t.Helper()
	raw, ok := e.Data.(json.RawMessage)
	if !ok {
		t.Fatalf("event %d data is %T, want json.RawMessage", e.ID, e.Data)
	}
	var d struct{ I int }
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	return d.I
}

// checkSeq checks that evs are the events of thread with steps want, in increasing id order.
func checkSeq(t *testing.T, evs []postgres.StoredEvent, tenant, thread string, want []int) {
	t.Helper()
	if len(evs) != len(want) {
		t.Fatalf("%d events, want %d", len(evs), len(want))
	}
	var last int64
	for k, e := range evs {
		if e.ID <= last {
			t.Fatalf("event %d: id %d after %d, want increasing", k, e.ID, last)
		}
		last = e.ID
		if e.TenantID != tenant || e.Thread != thread || e.Step != want[k] || dataI(t, e) != want[k] ||
			e.Kind != graph.KindUpdates || e.Node != "n"+strconv.Itoa(want[k]%3) || e.TaskID != "task-"+strconv.Itoa(want[k]) {
			t.Fatalf("event %d = %+v, want tenant %s thread %s step %d", k, e, tenant, thread, want[k])
		}
	}
}

func steps(from, to int) []int {
	var s []int
	for i := from; i < to; i++ {
		s = append(s, i)
	}
	return s
}

func TestEventBusReplayLiveAndTenants(t *testing.T) {
	t.Parallel()
	b := setupBus(t, postgres.EventBusOptions{PollInterval: time.Hour}) // NOTIFY only
	threads := []string{"th-a", "th-b", "th-c"}
	const perThread = 40
	for i := range perThread {
		for _, th := range threads {
			b.bus.Publish(b.ctx, "acme", ev(th, i))
		}
		b.bus.Publish(b.ctx, "globex", ev("th-g", i))
	}
	waitWritten(t, b.bus, 4*perThread)

	all, err := b.bus.ListEvents(b.ctx, "acme", "th-a", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	checkSeq(t, all, "acme", "th-a", steps(0, perThread))

	// A late subscriber resuming after the 10th event replays exactly the missing ones.
	late, err := b.bus.Subscribe(b.ctx, "acme", "th-a", all[9].ID)
	if err != nil {
		t.Fatal(err)
	}
	checkSeq(t, recv(t, late, perThread-10, 10*time.Second), "acme", "th-a", steps(10, perThread))

	// Another tenant subscribing to the same thread id, and a tenant-wide dashboard.
	intruder, err := b.bus.Subscribe(b.ctx, "globex", "th-a", 0)
	if err != nil {
		t.Fatal(err)
	}
	dash, err := b.bus.Subscribe(b.ctx, "acme", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	// A client resuming after an id no event has yet (made up, or from another database) has
	// seen nothing to come: it gets the live events.
	ahead, err := b.bus.Subscribe(b.ctx, "acme", "th-a", all[len(all)-1].ID+1_000_000)
	if err != nil {
		t.Fatal(err)
	}
	replayed := recv(t, dash, 3*perThread, 10*time.Second)
	for _, e := range replayed {
		if e.TenantID != "acme" || e.Thread == "th-g" {
			t.Fatalf("dashboard of acme got %+v", e)
		}
	}

	// Live: new events reach the subscriber through NOTIFY (polling is off).
	for i := perThread; i < perThread+15; i++ {
		b.bus.Publish(b.ctx, "acme", ev("th-a", i))
		b.bus.Publish(b.ctx, "acme", ev("th-b", i))
	}
	checkSeq(t, recv(t, late, 15, 10*time.Second), "acme", "th-a", steps(perThread, perThread+15))
	checkSeq(t, recv(t, ahead, 15, 10*time.Second), "acme", "th-a", steps(perThread, perThread+15))
	if got := recv(t, dash, 30, 10*time.Second); got[0].Thread != "th-a" || got[1].Thread != "th-b" {
		t.Fatalf("dashboard live events start with %+v", got[:2])
	}
	quiet(t, intruder, 200*time.Millisecond)
	quiet(t, late, 50*time.Millisecond)
	quiet(t, ahead, 50*time.Millisecond)

	if s := b.bus.Stats(); s.Dropped != 0 || s.Errors != 0 {
		t.Fatalf("stats %+v", s)
	}
}

func TestEventBusCoalescesNotifications(t *testing.T) {
	t.Parallel()
	b := setupBus(t, postgres.EventBusOptions{})
	conn, err := pgx.Connect(b.ctx, b.url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(b.ctx, "LISTEN weft_events"); err != nil {
		t.Fatal(err)
	}

	const workers, each = 8, 125 // 1,000 events
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				b.bus.Publish(b.ctx, "acme", ev("th-"+strconv.Itoa(w), i))
			}
		})
	}
	wg.Wait()
	waitWritten(t, b.bus, workers*each)
	stats := b.bus.Stats()

	var notes []map[string]any
	for {
		ctx, cancel := context.WithTimeout(b.ctx, 300*time.Millisecond)
		n, err := conn.WaitForNotification(ctx)
		cancel()
		if err != nil {
			break
		}
		var p map[string]any
		if err := json.Unmarshal([]byte(n.Payload), &p); err != nil {
			t.Fatalf("payload %q: %v", n.Payload, err)
		}
		notes = append(notes, p)
	}
	t.Logf("1,000 events: %d batches, %d notifications", stats.Batches, len(notes))
	if len(notes) == 0 || uint64(len(notes)) > stats.Batches || len(notes) > 100 {
		t.Fatalf("%d notifications for %d batches, want 1..min(batches, 100)", len(notes), stats.Batches)
	}
	// The last notification points at the last event written.
	evs, err := b.bus.ListEvents(b.ctx, "acme", "", 0, 2000)
	if err != nil {
		t.Fatal(err)
	}
	last := notes[len(notes)-1]
	if len(evs) != workers*each || last["max_id"] != float64(evs[len(evs)-1].ID) {
		t.Fatalf("%d events, last notification %v, last id %d", len(evs), last, evs[len(evs)-1].ID)
	}
	if tenants, _ := last["tenants"].([]any); len(tenants) != 1 || tenants[0] != "acme" {
		t.Fatalf("last notification %v, want tenants [acme]", last)
	}
}

// A subscriber that does not read holds up nobody, and catches up from the table later.
func TestEventBusSlowSubscriber(t *testing.T) {
	t.Parallel()
	b := setupBus(t, postgres.EventBusOptions{SubscriberBuffer: 2})
	slow, err := b.bus.Subscribe(b.ctx, "acme", "th", 0)
	if err != nil {
		t.Fatal(err)
	}
	fast, err := b.bus.Subscribe(b.ctx, "acme", "th", 0)
	if err != nil {
		t.Fatal(err)
	}
	const n = 1200 // more than one page of reads
	for i := range n {
		b.bus.Publish(b.ctx, "acme", ev("th", i))
	}
	checkSeq(t, recv(t, fast, n, 20*time.Second), "acme", "th", steps(0, n))
	checkSeq(t, recv(t, slow, n, 20*time.Second), "acme", "th", steps(0, n))
}

// The listener survives its connection being killed: with polling off, events published
// after the kill still arrive.
func TestEventBusListenerReconnects(t *testing.T) {
	t.Parallel()
	b := setupBus(t, postgres.EventBusOptions{PollInterval: time.Hour})
	sub, err := b.bus.Subscribe(b.ctx, "acme", "th", 0)
	if err != nil {
		t.Fatal(err)
	}
	b.bus.Publish(b.ctx, "acme", ev("th", 0))
	recv(t, sub, 1, 10*time.Second)

	pool := b.db.Pool()
	var killed bool
	if err := pool.QueryRow(b.ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE datname = current_database() AND query LIKE 'LISTEN%'`).Scan(&killed); err != nil || !killed {
		t.Fatalf("terminate listener: %v %v", killed, err)
	}
	for i := 1; i < 20; i++ {
		b.bus.Publish(b.ctx, "acme", ev("th", i))
		time.Sleep(5 * time.Millisecond)
	}
	checkSeq(t, recv(t, sub, 19, 15*time.Second), "acme", "th", steps(1, 20))
}

func TestEventBusStoresAwkwardData(t *testing.T) {
	t.Parallel()
	b := setupBus(t, postgres.EventBusOptions{})
	b.bus.Publish(b.ctx, "acme", graph.Event{Kind: graph.KindCustom, Thread: "th", Node: "a\x00b",
		Data: map[string]string{"nul": "x\x00y", "esc": `\u0000`}})
	b.bus.Publish(b.ctx, "acme", graph.Event{Kind: graph.KindStep, Thread: "th", Step: 1})           // no data
	b.bus.Publish(b.ctx, "acme", graph.Event{Kind: graph.KindCustom, Thread: "th", Data: func() {}}) // unencodable
	waitWritten(t, b.bus, 3)
	evs, err := b.bus.ListEvents(b.ctx, "acme", "th", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 3 {
		t.Fatalf("%d events, want 3", len(evs))
	}
	var d map[string]string
	if err := json.Unmarshal(evs[0].Data.(json.RawMessage), &d); err != nil {
		t.Fatal(err)
	}
	if d["nul"] != "x\uFFFDy" || d["esc"] != `\u0000` || evs[0].Node != "a\uFFFDb" {
		t.Fatalf("stored %q node %q", d, evs[0].Node)
	}
	if evs[1].Data != nil || evs[1].Kind != graph.KindStep || evs[1].Step != 1 {
		t.Fatalf("event without data came back as %+v", evs[1])
	}
	if raw := string(evs[2].Data.(json.RawMessage)); !strings.Contains(raw, "encode_error") {
		t.Fatalf("unencodable data stored as %s", raw)
	}
	out, err := json.Marshal(evs[1])
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatal(err)
	}
	if m["id"] != float64(evs[1].ID) || m["tenant_id"] != "acme" || m["kind"] != "step" || m["thread_id"] != "th" {
		t.Fatalf("StoredEvent JSON %s", out)
	}
}

func TestEventBusClose(t *testing.T) {
	t.Parallel()
	b := setupBus(t, postgres.EventBusOptions{BatchOptions: postgres.BatchOptions{FlushInterval: time.Hour, MaxBatch: 1 << 20}})
	sub, err := b.bus.Subscribe(b.ctx, "acme", "th", 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		b.bus.Publish(b.ctx, "acme", ev("th", i))
	}
	if err := b.bus.Close(b.ctx); err != nil { // flushes despite the hour-long interval
		t.Fatal(err)
	}
	for range sub { // closed by Close
	}
	if _, err := b.bus.Subscribe(b.ctx, "acme", "th", 0); err == nil {
		t.Fatal("Subscribe on a closed bus succeeded")
	}
	b.bus.Publish(b.ctx, "acme", ev("th", 100))
	evs, err := b.bus.ListEvents(b.ctx, "acme", "th", 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	checkSeq(t, evs, "acme", "th", steps(0, 100))
	if s := b.bus.Stats(); s.Rows != 100 || s.Dropped != 1 {
		t.Fatalf("stats %+v, want 100 rows and 1 dropped (published after close)", s)
	}
}

// ---- two processes ---------------------------------------------------------------------

// Environment of the helper process.
const (
	envHelper = "WEFT_EVENTBUS_HELPER"
	envURL    = "WEFT_EVENTBUS_URL"
	envThread = "WEFT_EVENTBUS_THREAD"
)

type pipelineState struct {
	Count int
	Log   []string `weft:"append"`
}

// pipeline is a five-node line with a pause before "n3", so a run takes two invocations.
func pipeline(cp graph.Checkpointer) (*graph.Graph[pipelineState], error) {
	bld := graph.New[pipelineState]()
	prev := graph.START
	for i := range 5 {
		name := "n" + strconv.Itoa(i)
		bld.AddNode(name, func(ctx context.Context, s pipelineState) (graph.Command, error) {
			graph.Emit(ctx, map[string]any{"progress": name})
			return graph.Update(graph.Set("Count", s.Count+1), graph.Set("Log", []string{name})), nil
		})
		bld.AddEdge(prev, name)
		prev = name
	}
	bld.AddEdge(prev, graph.END)
	return bld.Compile(graph.WithCheckpointer(cp), graph.WithInterruptBefore("n3"))
}

// TestHelperProcess is the other process of TestEventBusAcrossProcesses: it runs a thread of
// the pipeline with the PostgreSQL checkpointer and publishes every event, the way the runner
// does. It runs until the pause, says "paused", waits for a line on stdin, finishes the run,
// closes the bus and says "done <events published> <dropped>".
func TestHelperProcess(t *testing.T) {
	if os.Getenv(envHelper) != "1" {
		return
	}
	ctx := context.Background()
	d, err := postgres.Open(ctx, os.Getenv(envURL))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	bus := postgres.NewEventBus(d, postgres.EventBusOptions{})
	g, err := pipeline(postgres.NewCheckpointer(d))
	if err != nil {
		t.Fatal(err)
	}
	published := 0
	sink := func(e graph.Event) bool {
		published++
		bus.Publish(ctx, "acme", e)
		return true
	}
	cfg := graph.Config{ThreadID: os.Getenv(envThread)}
	out, err := g.Run(ctx, cfg, graph.Update(graph.Set("Count", 0)), graph.ModeAll, sink)
	if err != nil || len(out.Next) != 1 || out.Next[0] != "n3" {
		t.Fatalf("first run: %+v %v", out, err)
	}
	fmt.Println("paused")
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	if out, err = g.Run(ctx, cfg, graph.Command{}, graph.ModeAll, sink); err != nil || !out.Done() {
		t.Fatalf("second run: %+v %v", out, err)
	}
	if err := bus.Close(ctx); err != nil {
		t.Fatal(err)
	}
	fmt.Println("done", published, bus.Stats().Dropped)
}

func TestEventBusAcrossProcesses(t *testing.T) {
	t.Parallel()
	b := setupBus(t, postgres.EventBusOptions{})
	const thread = "cross-process"
	// Subscribed before the other process starts.
	early, err := b.bus.Subscribe(b.ctx, "acme", thread, 0)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(b.ctx, os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), envHelper+"=1", envURL+"="+b.url, envThread+"="+thread)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stdout)
	next := func() string {
		for lines.Scan() {
			if l := lines.Text(); strings.HasPrefix(l, "paused") || strings.HasPrefix(l, "done") {
				return l
			}
		}
		_ = cmd.Wait()
		t.Fatalf("helper process ended: %s", stderr.String())
		return ""
	}

	// While the other process is paused mid-run, its events so far arrive live.
	if l := next(); l != "paused" {
		t.Fatalf("helper said %q", l)
	}
	stored, err := b.bus.ListEvents(b.ctx, "acme", thread, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(stored) == 0 || stored[len(stored)-1].Kind != graph.KindInterrupt {
		if time.Now().After(deadline) {
			t.Fatalf("first half not stored: %d events", len(stored))
		}
		time.Sleep(5 * time.Millisecond)
		if stored, err = b.bus.ListEvents(b.ctx, "acme", thread, 0, 0); err != nil {
			t.Fatal(err)
		}
	}
	firstHalf := len(stored)
	got := recv(t, early, firstHalf, 10*time.Second)
	// Subscribed after the other process started: replays the first half, then goes live.
	mid, err := b.bus.Subscribe(b.ctx, "acme", thread, 0)
	if err != nil {
		t.Fatal(err)
	}
	gotMid := recv(t, mid, firstHalf, 10*time.Second)

	if _, err := io.WriteString(stdin, "go\n"); err != nil {
		t.Fatal(err)
	}
	l := next()
	var published, dropped int
	if _, err := fmt.Sscanf(l, "done %d %d", &published, &dropped); err != nil || dropped != 0 {
		t.Fatalf("helper said %q (%v)", l, err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("helper process: %v\n%s", err, stderr.String())
	}
	got = append(got, recv(t, early, published-firstHalf, 10*time.Second)...)
	gotMid = append(gotMid, recv(t, mid, published-firstHalf, 10*time.Second)...)

	// Subscribed after the other process ended, resuming from an id: replays the rest.
	all, err := b.bus.ListEvents(b.ctx, "acme", thread, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != published {
		t.Fatalf("%d events stored, the helper published %d", len(all), published)
	}
	late, err := b.bus.Subscribe(b.ctx, "acme", thread, all[firstHalf-1].ID)
	if err != nil {
		t.Fatal(err)
	}
	gotLate := recv(t, late, published-firstHalf, 10*time.Second)

	if !reflect.DeepEqual(postgres.Plain(got), all) || !reflect.DeepEqual(postgres.Plain(gotMid), all) ||
		!reflect.DeepEqual(postgres.Plain(gotLate), all[firstHalf:]) {
		t.Fatalf("subscribers' events differ from the stored ones")
	}
	kinds := map[string]int{}
	for _, e := range all {
		kinds[e.Kind]++
	}
	if kinds[graph.KindTaskResult] != 5 || kinds[graph.KindCustom] != 5 || kinds[graph.KindInterrupt] != 1 ||
		kinds[graph.KindCheckpoint] == 0 {
		t.Fatalf("event kinds %v", kinds)
	}
	quiet(t, early, 50*time.Millisecond)
	t.Logf("helper process published %d events (%d before its pause); all three subscribers got them in order", published, firstHalf)
}

// An event fanned out live to many subscriptions is encoded once for all of them (Encode);
// a replayed one is encoded for its subscription alone; encodings are told apart by key.
func TestEventBusEncodesOncePerEvent(t *testing.T) {
	t.Parallel()
	b := setupBus(t, postgres.EventBusOptions{})
	type keyA struct{}
	type keyB struct{}
	var calls sync.Map // key → *atomic counter
	encoder := func(key string) func(postgres.StoredEvent) ([]byte, error) {
		n, _ := calls.LoadOrStore(key, new(atomic.Int64))
		return func(e postgres.StoredEvent) ([]byte, error) {
			n.(*atomic.Int64).Add(1)
			return fmt.Appendf(nil, "%s %d %s", key, e.ID, e.Node), nil
		}
	}
	count := func(key string) int64 {
		n, _ := calls.LoadOrStore(key, new(atomic.Int64))
		return n.(*atomic.Int64).Load()
	}
	const subs = 20
	chans := make([]<-chan postgres.StoredEvent, subs)
	for i := range chans {
		thread := "th"
		if i%2 == 1 {
			thread = "" // tenant-wide subscriptions share it too
		}
		ch, err := b.bus.Subscribe(b.ctx, "acme", thread, 0)
		if err != nil {
			t.Fatal(err)
		}
		chans[i] = ch
	}
	b.bus.Publish(b.ctx, "acme", ev("th", 1))
	encA, encB := encoder("a"), encoder("b")
	var wg sync.WaitGroup
	got := make([][]byte, subs)
	for i, ch := range chans {
		e := recv(t, ch, 1, 10*time.Second)[0]
		wg.Go(func() { // at once, as the streams do
			a, err := e.Encode(keyA{}, encA)
			if err != nil {
				t.Error(err)
			}
			if _, err := e.Encode(keyB{}, encB); err != nil {
				t.Error(err)
			}
			got[i] = a
		})
	}
	wg.Wait()
	if count("a") != 1 || count("b") != 1 {
		t.Fatalf("encoded %d and %d times for %d subscriptions, want once each", count("a"), count("b"), subs)
	}
	for _, g := range got {
		if !bytes.Equal(g, got[0]) || !strings.HasPrefix(string(g), "a ") {
			t.Fatalf("encodings differ: %q, %q", g, got[0])
		}
	}
	// A replay reads its own copy from the table.
	late, err := b.bus.Subscribe(b.ctx, "acme", "th", 0)
	if err != nil {
		t.Fatal(err)
	}
	e := recv(t, late, 1, 10*time.Second)[0]
	if a, err := e.Encode(keyA{}, encA); err != nil || !bytes.Equal(a, got[0]) || count("a") != 2 {
		t.Fatalf("replayed event encoded to %q (%v), %d encodings", a, err, count("a"))
	}
}

// SubscribeFunc delivers replayed then live events in order on one goroutine; an error from
// deliver ends the subscription, and so does its context.
func TestEventBusSubscribeFunc(t *testing.T) {
	t.Parallel()
	b := setupBus(t, postgres.EventBusOptions{})
	for i := range 3 {
		b.bus.Publish(b.ctx, "acme", ev("th", i))
	}
	waitWritten(t, b.bus, 3)
	got := make(chan postgres.StoredEvent, 16)
	stop := errors.New("enough")
	done, err := b.bus.SubscribeFunc(b.ctx, "acme", "th", 0, func(e postgres.StoredEvent) error {
		got <- e
		if e.Step == 4 {
			return stop
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := 3; i < 6; i++ {
		b.bus.Publish(b.ctx, "acme", ev("th", i))
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the subscription did not end when deliver failed")
	}
	close(got)
	var steps []int
	for e := range got {
		steps = append(steps, e.Step)
	}
	if fmt.Sprint(steps) != "[0 1 2 3 4]" {
		t.Fatalf("delivered steps %v", steps)
	}

	ctx, cancel := context.WithCancel(b.ctx)
	done, err = b.bus.SubscribeFunc(ctx, "acme", "th", 0, func(postgres.StoredEvent) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the subscription did not end with its context")
	}
}

// A full queue drops events instead of blocking, and the stream says so where it happened.
func TestEventBusDropsWhenFull(t *testing.T) {
	t.Parallel()
	b := setupBus(t, postgres.EventBusOptions{})
	bus, release := postgres.NewEventBusHeld(b.db, postgres.EventBusOptions{BatchOptions: postgres.BatchOptions{Buffer: 10}})
	bus.Publish(b.ctx, "acme", ev("th", 0))
	time.Sleep(50 * time.Millisecond) // the writer holds event 0 and waits at the gate
	start := time.Now()
	for i := 1; i <= 30; i++ {
		bus.Publish(b.ctx, "acme", ev("th", i))
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("publishing to a full queue took %v", d)
	}
	if s := bus.Stats(); s.Dropped != 20 || s.Queued != 11 {
		t.Fatalf("stats %+v, want 11 queued and 20 dropped", s)
	}
	release()
	if err := bus.Close(b.ctx); err != nil {
		t.Fatal(err)
	}
	evs, err := bus.ListEvents(b.ctx, "acme", "th", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 12 {
		t.Fatalf("%d events stored, want 11 and a marker", len(evs))
	}
	checkSeq(t, evs[:11], "acme", "th", steps(0, 11))
	marker := evs[11]
	var dropped struct{ Dropped int }
	_ = json.Unmarshal(marker.Data.(json.RawMessage), &dropped)
	if marker.Kind != postgres.KindEventsDropped || dropped.Dropped != 20 {
		t.Fatalf("marker %+v %s", marker, marker.Data)
	}
}

// An idle listener keeps its connection: waiting for a notification times out, a ping
// checks the connection, and notifications still arrive on it.
func TestEventBusIdleListener(t *testing.T) {
	t.Parallel()
	b := setupBus(t, postgres.EventBusOptions{})
	bus, connects := postgres.NewEventBusChecking(b.db, postgres.EventBusOptions{PollInterval: time.Hour}, 20*time.Millisecond)
	t.Cleanup(func() { _ = bus.Close(context.Background()) })
	sub, err := bus.Subscribe(b.ctx, "acme", "th", 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		time.Sleep(100 * time.Millisecond) // several idle checks
		bus.Publish(b.ctx, "acme", ev("th", i))
		checkSeq(t, recv(t, sub, 1, 10*time.Second), "acme", "th", []int{i})
	}
	if n := connects(); n != 1 {
		t.Fatalf("listener connected %d times, want 1", n)
	}
}
