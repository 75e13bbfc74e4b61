package postgres_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"weft/internal/graph"
	"weft/internal/postgres"
	"weft/internal/postgres/pgtest"
)

// Migration 18 gives the jobs that can still run the thread head their run started from
// (jobs.base_checkpoint), so an upgrade neither skips nor repeats a queued re-run. Each job
// below is on a thread of its own whose head is stamped by a worker clock an hour ahead of
// the database or an hour behind.
func TestMigrationBaseCheckpoint(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	u, conn := migratedTo(t, 17)
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := conn.Exec(ctx, sql, args...); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	type job struct {
		name    string
		input   bool
		headAge time.Duration // the head's time, from the job's creation (worker clock)
		touched bool          // changed since it was queued (claimed, released, …)
		status  string
		want    bool // a base_checkpoint (the thread's head)
	}
	jobs := []job{
		// Queued and never touched: its run has not started, whatever the clocks say.
		{name: "untouched, clock ahead", input: true, headAge: time.Hour, status: "queued", want: true},
		{name: "untouched, clock behind", input: true, headAge: -time.Hour, status: "queued", want: true},
		// Touched: the old rule decides (its run started if the head is newer than the job).
		{name: "released before its run", input: true, headAge: -time.Hour, touched: true, status: "queued", want: true},
		{name: "released during its run", input: true, headAge: time.Hour, touched: true, status: "queued"},
		{name: "running its run", input: true, headAge: time.Hour, touched: true, status: "running"},
		// No input, nothing to apply.
		{name: "no input", headAge: -time.Hour, status: "queued"},
	}
	heads := map[string]string{}
	for i, j := range jobs {
		thread := "thread-" + string(rune('a'+i))
		var head string
		if err := conn.QueryRow(ctx, `SELECT gen_random_uuid()::text`).Scan(&head); err != nil {
			t.Fatal(err)
		}
		heads[j.name] = head
		exec(`INSERT INTO checkpoint_heads (head, thread_id, ns) VALUES ($1, $2, '')`, head, thread)
		exec(`INSERT INTO checkpoints (space_id, id, created_at, step, source, versions, meta)
			SELECT space_id, head, now() + $2::interval, 0, 'input', '{}', '{}' FROM checkpoint_heads WHERE thread_id = $1`,
			thread, j.headAge.String())
		var input any
		if j.input {
			input = `{"seq":1}`
		}
		exec(`INSERT INTO jobs (id, tenant_id, workflow, thread_id, trace_id, subject, input)
			VALUES (gen_random_uuid(), 't', 'wf', $1, 'trace', $2, $3::jsonb)`, thread, j.name, input)
		if j.touched {
			time.Sleep(2 * time.Millisecond) // a later transaction: a later now()
			exec(`UPDATE jobs SET status = 'running', lease_owner = 'w', lease_until = now() + interval '1 minute' WHERE subject = $1`, j.name)
			if j.status == "queued" {
				exec(`UPDATE jobs SET status = 'queued', lease_owner = NULL, lease_until = NULL WHERE subject = $1`, j.name)
			}
		}
	}
	before := map[string]time.Time{}
	rows, _ := conn.Query(ctx, `SELECT subject, updated_at FROM jobs`)
	for rows.Next() {
		var s string
		var at time.Time
		if err := rows.Scan(&s, &at); err != nil {
			t.Fatal(err)
		}
		before[s] = at
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}

	if err := postgres.Migrate(ctx, u, nil); err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		var base *string
		var updated time.Time
		if err := conn.QueryRow(ctx, `SELECT base_checkpoint::text, updated_at FROM jobs WHERE subject = $1`, j.name).Scan(&base, &updated); err != nil {
			t.Fatal(err)
		}
		switch {
		case j.want && (base == nil || *base != heads[j.name]):
			t.Errorf("%s: base_checkpoint %v, want the thread's head %s", j.name, base, heads[j.name])
		case !j.want && base != nil:
			t.Errorf("%s: base_checkpoint %s, want none (its run started, or it has no input)", j.name, *base)
		}
		if !updated.Equal(before[j.name]) {
			t.Errorf("%s: updated_at moved from %v to %v: the backfill is no change of the job's", j.name, before[j.name], updated)
		}
	}
}

// Migration 19 makes a live API token's name unique in its tenant: of live tokens sharing a
// name, the newest keeps it and the older stay live under the name with their hash's first 8
// digits appended; revoked ones and other tenants' tokens are left alone.
func TestMigrationAPITokenNames(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	u, conn := migratedTo(t, 18)
	if _, err := conn.Exec(ctx, `INSERT INTO tenants (id, name) VALUES ('a', 'A'), ('b', 'B');
		INSERT INTO api_tokens (hash, tenant_id, name, role, created_by, created_at, revoked_at) VALUES
			('0123456789old', 'a', 'ci', 'pm', 't', now() - interval '2 days', NULL),
			('abcdef012new', 'a', 'ci', 'pm', 't', now() - interval '1 day', NULL),
			('gone', 'a', 'ci', 'pm', 't', now() - interval '3 days', now() - interval '3 days'),
			('other', 'b', 'ci', 'pm', 't', now() - interval '5 days', NULL)`); err != nil {
		t.Fatal(err)
	}
	if err := postgres.MigrateTo(ctx, u, 19); err != nil {
		t.Fatal(err)
	}
	rows, err := conn.Query(ctx, `SELECT hash || ' ' || name || ' ' || (revoked_at IS NULL)::text FROM api_tokens ORDER BY hash`)
	if err != nil {
		t.Fatal(err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[string])
	want := []string{"0123456789old ci-01234567 true", "abcdef012new ci true", "gone ci false", "other ci true"}
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("tokens after the migration: %q %v, want %q", got, err, want)
	}
	if _, err := conn.Exec(ctx, `INSERT INTO api_tokens (hash, tenant_id, name, role, created_by) VALUES ('dup', 'a', 'ci', 'pm', 't')`); err == nil {
		t.Fatal("a second live token named ci was stored")
	}
}

// migratedTo is a new database migrated up to version, and a connection to it.
func migratedTo(t *testing.T, version int64) (string, *pgx.Conn) {
	t.Helper()
	ctx := context.Background()
	u := pgtest.EmptyURL(t)
	if err := postgres.MigrateTo(ctx, u, version); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return u, conn
}

// A database a newer binary migrated (its schema version is beyond this one's migrations)
// opens with a warning in the log, not silently.
// The URL that Open takes, pool settings and all, migrates too (`weft migrate` on the
// DATABASE_URL that `weft serve` uses).
func TestMigrateTakesPoolSettings(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, url := range []string{pgtest.EmptyURL(t) + "&pool_max_conns=20&pool_min_conns=1", pgtest.URL(t) + "&pool_max_conns=20"} {
		if err := postgres.Migrate(ctx, url, nil); err != nil {
			t.Fatalf("migrate %s: %v", url, err)
		}
		if v, err := postgres.SchemaVersion(ctx, url); err != nil || v == 0 {
			t.Fatalf("schema version of %s: %d %v", url, v, err)
		}
	}
}

func TestOpenWarnsOfANewerSchema(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.URL(t)
	d, err := postgres.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Pool().Exec(ctx, `INSERT INTO goose_db_version (version_id, is_applied) VALUES (999999, true)`); err != nil {
		t.Fatal(err)
	}
	d.Close()
	var logged bytes.Buffer
	d, err = postgres.Open(ctx, url, postgres.WithLogger(slog.New(slog.NewTextHandler(&logged, nil))))
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	if !strings.Contains(logged.String(), "newer than this binary's migrations") || !strings.Contains(logged.String(), "database_version=999999") {
		t.Fatalf("no warning of the newer schema in the log:\n%s", logged.String())
	}
}

// Migration 26 packs the stream events a batch per row: events stored before it keep their
// ids, tenants, threads and fields, replay from an id as before, and new events come after
// them. Migration 27 leaves those rows as they are; new rows are stored compressed.
func TestMigrationPacksEvents(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	u, conn := migratedTo(t, 25)
	old := time.Date(2026, 11, 20, 9, 30, 0, 123456000, time.UTC)
	if _, err := conn.Exec(ctx, `INSERT INTO events (id, tenant_id, thread_id, ns, kind, step, node, task_id, at, data) VALUES
		(3, 'acme', 'th', '', 'checkpoint', 0, '', '', $1, '{"id":"c1","next":["a"]}'),
		(4, 'acme', 'th', 'sub:1', 'custom', 2, 'score', 'task-9', $1, '{"b": 1, "a": "x"}'),
		(5, 'globex', 'th', '', 'custom', 1, '', '', $1, NULL),
		(300, 'acme', 'other', '', 'job', 0, '', '', $1, '"done"'),
		(301, 'acme', 'th', '', 'interrupt', 3, 'review', '', $1, '[1,2]'),
		(302, 'café', 'th', '', 'custom', 1, '', '', $1, 'null')`, old); err != nil {
		t.Fatal(err)
	}
	// Events up to 5,000,000 were stored once, and the newest of them pruned since.
	if _, err := conn.Exec(ctx, `SELECT setval('events_id_seq', 5000000)`); err != nil {
		t.Fatal(err)
	}
	for _, v := range []int64{26, 27} {
		if err := postgres.MigrateTo(ctx, u, v); err != nil {
			t.Fatal(err)
		}
	}
	d, err := postgres.Open(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	bus := postgres.NewEventBus(d, postgres.EventBusOptions{})
	defer bus.Close(ctx)
	got, err := bus.ListEvents(ctx, "acme", "th", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`3 acme th  checkpoint 0   {"id": "c1", "next": ["a"]}`,
		`4 acme th sub:1 custom 2 score task-9 {"a": "x", "b": 1}`,
		`301 acme th  interrupt 3 review  [1, 2]`,
	}
	line := func(e postgres.StoredEvent) string {
		data, _ := e.Data.(json.RawMessage)
		return fmt.Sprintf("%d %s %s %s %s %d %s %s %s", e.ID, e.TenantID, e.Thread, e.NS, e.Kind, e.Step, e.Node, e.TaskID, data)
	}
	var lines []string
	for _, e := range got {
		lines = append(lines, line(e))
		if !e.At.Equal(old) {
			t.Errorf("event %d: at %v, want %v", e.ID, e.At, old)
		}
	}
	if !slices.Equal(lines, want) {
		t.Errorf("acme's thread th after the migration:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	// A replay from an id, and another tenant's thread of the same name.
	if got, err := bus.ListEvents(ctx, "acme", "th", 4, 0); err != nil || len(got) != 1 || got[0].ID != 301 {
		t.Errorf("acme/th after 4: %v %v, want event 301", got, err)
	}
	if got, err := bus.ListEvents(ctx, "globex", "th", 0, 0); err != nil || len(got) != 1 || got[0].ID != 5 || got[0].Data != nil {
		t.Errorf("globex/th: %v %v, want event 5 without data", got, err)
	}
	// A tenant whose name is not ASCII finds its thread's events.
	if got, err := bus.ListEvents(ctx, "café", "th", 0, 0); err != nil || len(got) != 1 || got[0].ID != 302 {
		t.Errorf("café/th: %v %v, want event 302", got, err)
	}
	bus.Publish(ctx, "acme", graph.Event{Kind: "custom", Thread: "th"})
	if err := bus.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	// New events come after every id given before, pruned ones included: a client's old
	// Last-Event-ID names no event to come.
	if got, err := bus.ListEvents(ctx, "acme", "th", 301, 0); err != nil || len(got) != 1 || got[0].ID <= 5000000 {
		t.Errorf("a new event after the migration: %v %v, want one after 5000000", got, err)
	}
	// The new row is compressed, its events text '[]': a process on the code before 27 reads
	// it as a row without events.
	var text, packed int
	if err := conn.QueryRow(ctx, `SELECT count(*) FILTER (WHERE packed IS NULL), count(*) FILTER (WHERE packed IS NOT NULL AND events = '[]') FROM events`).Scan(&text, &packed); err != nil || text != 2 || packed != 1 {
		t.Errorf("rows with their events as JSON text, compressed: %d, %d (%v), want the 2 migrated rows, the new one", text, packed, err)
	}
	// The prune takes the migrated events (row 0 among them) and counts events, not ids.
	if n, err := bus.Prune(ctx, old.Add(time.Hour)); err != nil || n != 6 {
		t.Errorf("prune of the migrated events: %d %v, want 6", n, err)
	}
	if got, err := bus.ListEvents(ctx, "acme", "th", 0, 0); err != nil || len(got) != 1 || got[0].ID <= 5000000 {
		t.Errorf("acme/th after the prune: %v %v, want only the new event", got, err)
	}
}
