// Package sqlite is the embedded tier of Weft's checkpointers (seed 001 §6.2: memory for
// tests, SQLite for a local run, PostgreSQL for production): a graph.Checkpointer in one
// SQLite file, on modernc.org/sqlite (pure Go, no cgo). It passes the same conformance
// suite (internal/checkpoint/checkpointtest) as the in-memory and PostgreSQL savers.
//
// The file is opened in WAL mode with two pools: one connection that writes (its
// transactions BEGIN IMMEDIATE, so a Put's compare-and-set of the head is atomic) and
// several that read (each GetTuple reads one snapshot). Several processes may share a
// file; a writer waits up to the busy timeout for another's lock. synchronous=NORMAL
// survives a process crash; a power loss may drop the last commits, never corrupt.
//
// It imports internal/graph, internal/checkpoint (for delta chains), the standard library
// and the SQLite driver.
package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"runtime"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"weft/internal/checkpoint"
	"weft/internal/graph"
)

// schemaVersion is stored in PRAGMA user_version; Open refuses a file written by a later
// schema.
const schemaVersion = 1

const schema = `
CREATE TABLE IF NOT EXISTS heads (
    thread TEXT NOT NULL,
    ns     TEXT NOT NULL,
    head   TEXT NOT NULL,
    PRIMARY KEY (thread, ns)
) WITHOUT ROWID;
-- One row per checkpoint; body is the checkpoint as JSON, without channel values.
-- Ids are UUIDv7 (time-ordered), so the key also pages a space newest first.
CREATE TABLE IF NOT EXISTS checkpoints (
    thread     TEXT NOT NULL,
    ns         TEXT NOT NULL,
    id         TEXT NOT NULL,
    source     TEXT NOT NULL,
    created_at INTEGER NOT NULL, -- unix nanoseconds
    body       BLOB NOT NULL,
    PRIMARY KEY (thread, ns, id)
) WITHOUT ROWID;
-- One row per (channel, version); a delta row holds only the items appended since base.
CREATE TABLE IF NOT EXISTS blobs (
    thread  TEXT NOT NULL,
    ns      TEXT NOT NULL,
    channel TEXT NOT NULL,
    version TEXT NOT NULL,
    delta   INTEGER NOT NULL,
    base    TEXT NOT NULL,
    data    BLOB NOT NULL,
    PRIMARY KEY (thread, ns, channel, version)
) WITHOUT ROWID;
-- Pending writes; the rowid keeps the order they were first saved in (an upsert keeps it).
CREATE TABLE IF NOT EXISTS writes (
    thread        TEXT NOT NULL,
    ns            TEXT NOT NULL,
    checkpoint_id TEXT NOT NULL,
    task_id       TEXT NOT NULL,
    seq           INTEGER NOT NULL,
    channel       TEXT NOT NULL,
    node          TEXT NOT NULL,
    data          BLOB NOT NULL,
    UNIQUE (thread, ns, checkpoint_id, task_id, seq, channel)
);
`

// The hot paths' queries, prepared when the file is opened.
const (
	qHead     = `SELECT head FROM heads WHERE thread = ? AND ns = ?`
	qExists   = `SELECT 1 FROM checkpoints WHERE thread = ? AND ns = ? AND id = ?`
	qPutCP    = `INSERT INTO checkpoints (thread, ns, id, source, created_at, body) VALUES (?, ?, ?, ?, ?, ?)`
	qPutBlob  = `INSERT OR REPLACE INTO blobs (thread, ns, channel, version, delta, base, data) VALUES (?, ?, ?, ?, ?, ?, ?)`
	qPutWrite = `INSERT INTO writes (thread, ns, checkpoint_id, task_id, seq, channel, node, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (thread, ns, checkpoint_id, task_id, seq, channel) DO UPDATE SET node = excluded.node, data = excluded.data`
	qMoveHead   = `INSERT INTO heads (thread, ns, head) VALUES (?, ?, ?) ON CONFLICT (thread, ns) DO UPDATE SET head = excluded.head`
	qBody       = `SELECT body FROM checkpoints WHERE thread = ? AND ns = ? AND id = ?`
	qBlob       = `SELECT delta, base, data FROM blobs WHERE thread = ? AND ns = ? AND channel = ? AND version = ?`
	qReadWrites = `SELECT task_id, node, seq, channel, data FROM writes WHERE thread = ? AND ns = ? AND checkpoint_id = ? ORDER BY rowid`
)

var (
	writeQueries = []string{qHead, qExists, qPutCP, qPutBlob, qPutWrite, qMoveHead}
	readQueries  = []string{qHead, qExists, qBody, qBlob, qReadWrites}
)

// Checkpointer is a graph.Checkpointer on one SQLite file. It is safe for concurrent use.
type Checkpointer struct {
	w, r   *sql.DB
	ws, rs *stmtCache // prepared statements of each pool
	path   string
}

var _ graph.Checkpointer = (*Checkpointer)(nil)

// Open opens (creating when absent) the SQLite file at path and its tables. ":memory:"
// gives a private in-memory database (one connection, gone at Close).
func Open(ctx context.Context, path string) (*Checkpointer, error) {
	if path == "" {
		return nil, errors.New("open sqlite checkpointer: a file path is required")
	}
	mem := path == ":memory:"
	dsn := func(txlock string) string {
		q := url.Values{}
		q.Set("_busy_timeout", "10000")
		q.Set("_txlock", txlock)
		if !mem {
			q.Set("_journal_mode", "WAL")
			q.Set("_synchronous", "NORMAL")
		}
		return "file:" + path + "?" + q.Encode()
	}
	w, err := sql.Open("sqlite", dsn("immediate"))
	if err != nil {
		return nil, fmt.Errorf("open sqlite checkpointer %s: %w", path, err)
	}
	w.SetMaxOpenConns(1) // one writer: Puts queue here instead of spinning on SQLITE_BUSY
	c := &Checkpointer{w: w, r: w, path: path}
	if err := c.migrate(ctx); err != nil {
		_ = w.Close()
		return nil, err
	}
	queries := writeQueries
	if mem {
		queries = append(append([]string{}, writeQueries...), qBody, qBlob, qReadWrites)
	}
	if c.ws, err = newStmtCache(ctx, w, queries...); err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("open sqlite checkpointer %s: prepare: %w", path, err)
	}
	c.rs = c.ws
	if !mem {
		r, err := sql.Open("sqlite", dsn("deferred")+"&_query_only=1")
		if err != nil {
			_ = w.Close()
			return nil, fmt.Errorf("open sqlite checkpointer %s: %w", path, err)
		}
		r.SetMaxOpenConns(max(2, runtime.GOMAXPROCS(0)))
		c.r = r
		if c.rs, err = newStmtCache(ctx, r, readQueries...); err != nil {
			_ = c.Close()
			return nil, fmt.Errorf("open sqlite checkpointer %s: prepare: %w", path, err)
		}
	}
	return c, nil
}

func (c *Checkpointer) migrate(ctx context.Context) error {
	var v int
	if err := c.w.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return fmt.Errorf("open sqlite checkpointer %s: %w", c.path, err)
	}
	if v > schemaVersion {
		return fmt.Errorf("open sqlite checkpointer %s: the file has schema version %d, this build knows %d", c.path, v, schemaVersion)
	}
	if _, err := c.w.ExecContext(ctx, schema+fmt.Sprintf("PRAGMA user_version = %d;", schemaVersion)); err != nil {
		return fmt.Errorf("create sqlite checkpointer tables in %s: %w", c.path, err)
	}
	return nil
}

// Path is the database file.
func (c *Checkpointer) Path() string { return c.path }

// Close closes the database.
func (c *Checkpointer) Close() error {
	c.ws.close()
	if c.rs != c.ws {
		c.rs.close()
	}
	err := c.w.Close()
	if c.r != c.w {
		err = errors.Join(err, c.r.Close())
	}
	return err
}

// querier is what reads need from a *sql.DB or *sql.Tx.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// inTx runs fn in a write transaction (BEGIN IMMEDIATE) and commits when it returns nil.
func (c *Checkpointer) inTx(ctx context.Context, fn func(tx txq) error) error {
	tx, err := c.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(txq{tx: tx, cache: c.ws}); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

func headOf(ctx context.Context, q querier, thread, ns string) (string, error) {
	var head string
	err := q.QueryRowContext(ctx, qHead, thread, ns).Scan(&head)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return head, err
}

func exists(ctx context.Context, q querier, thread, ns, id string) (bool, error) {
	var one int
	err := q.QueryRowContext(ctx, qExists, thread, ns, id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// Put implements graph.Checkpointer.
func (c *Checkpointer) Put(ctx context.Context, req graph.PutRequest) error {
	cp := req.Checkpoint
	if cp.ID == "" || cp.ThreadID == "" {
		return fmt.Errorf("put checkpoint: id and thread id are required")
	}
	body, err := json.Marshal(cp)
	if err != nil {
		return fmt.Errorf("put checkpoint %s: encode: %w", cp.ID, err)
	}
	return c.inTx(ctx, func(tx txq) error {
		head, err := headOf(ctx, tx, cp.ThreadID, cp.NS)
		if err != nil {
			return fmt.Errorf("put checkpoint %s: %w", cp.ID, err)
		}
		if head != req.ExpectHead {
			return fmt.Errorf("put checkpoint %s (expected head %q, found %q): %w", cp.ID, req.ExpectHead, head, graph.ErrConflict)
		}
		if dup, err := exists(ctx, tx, cp.ThreadID, cp.NS, cp.ID); err != nil || dup {
			if err == nil {
				err = graph.ErrConflict
			}
			return fmt.Errorf("put checkpoint %s: %w", cp.ID, err)
		}
		if _, err := tx.ExecContext(ctx, qPutCP,
			cp.ThreadID, cp.NS, cp.ID, cp.Source, cp.CreatedAt.UnixNano(), body); err != nil {
			return fmt.Errorf("put checkpoint %s: %w", cp.ID, err)
		}
		for _, b := range req.Blobs {
			if _, err := tx.ExecContext(ctx, qPutBlob,
				cp.ThreadID, cp.NS, b.Channel, b.Version, b.Delta, b.Base, nonNil(b.Data)); err != nil {
				return fmt.Errorf("put checkpoint %s: blob %s@%s: %w", cp.ID, b.Channel, b.Version, err)
			}
		}
		if err := putWrites(ctx, tx, cp.ThreadID, cp.NS, cp.ID, req.Writes); err != nil {
			return fmt.Errorf("put checkpoint %s: %w", cp.ID, err)
		}
		if _, err := tx.ExecContext(ctx, qMoveHead, cp.ThreadID, cp.NS, cp.ID); err != nil {
			return fmt.Errorf("put checkpoint %s: move head: %w", cp.ID, err)
		}
		return nil
	})
}

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

func putWrites(ctx context.Context, tx txq, thread, ns, checkpointID string, ws []graph.PendingWrite) error {
	for _, w := range ws {
		if _, err := tx.ExecContext(ctx, qPutWrite, thread, ns, checkpointID, w.TaskID, w.Seq, w.Channel, w.Node, nonNil(w.Data)); err != nil {
			return fmt.Errorf("write %s/%d/%s: %w", w.TaskID, w.Seq, w.Channel, err)
		}
	}
	return nil
}

// PutWrites implements graph.Checkpointer.
func (c *Checkpointer) PutWrites(ctx context.Context, thread, ns, checkpointID string, writes []graph.PendingWrite) error {
	return c.inTx(ctx, func(tx txq) error {
		ok, err := exists(ctx, tx, thread, ns, checkpointID)
		if err != nil {
			return fmt.Errorf("put writes on checkpoint %s: %w", checkpointID, err)
		}
		if !ok {
			return fmt.Errorf("put writes on checkpoint %s: %w", checkpointID, graph.ErrNotFound)
		}
		if err := putWrites(ctx, tx, thread, ns, checkpointID, writes); err != nil {
			return fmt.Errorf("put writes on checkpoint %s: %w", checkpointID, err)
		}
		return nil
	})
}

// GetTuple implements graph.Checkpointer. It reads one snapshot of the file.
func (c *Checkpointer) GetTuple(ctx context.Context, thread, ns, checkpointID string) (*graph.Tuple, error) {
	rtx, err := c.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("get checkpoint of thread %s: %w", thread, err)
	}
	defer func() { _ = rtx.Rollback() }()
	tx := txq{tx: rtx, cache: c.rs}
	id := checkpointID
	if id == "" {
		if id, err = headOf(ctx, tx, thread, ns); err != nil {
			return nil, fmt.Errorf("get checkpoint of thread %s: %w", thread, err)
		}
		if id == "" {
			return nil, fmt.Errorf("thread %s: %w", thread, graph.ErrNotFound)
		}
	}
	var body []byte
	err = tx.QueryRowContext(ctx, qBody, thread, ns, id).Scan(&body)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("checkpoint %q of thread %s: %w", id, thread, graph.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("get checkpoint %s of thread %s: %w", id, thread, err)
	}
	var cp graph.Checkpoint
	if err := json.Unmarshal(body, &cp); err != nil {
		return nil, fmt.Errorf("decode checkpoint %s of thread %s: %w", id, thread, err)
	}
	t := &graph.Tuple{Checkpoint: cp, Values: make(map[string][]byte, len(cp.Versions))}
	for ch, v := range cp.Versions {
		val, err := value(ctx, tx, thread, ns, ch, v)
		if err != nil {
			return nil, fmt.Errorf("checkpoint %s of thread %s: %w", id, thread, err)
		}
		t.Values[ch] = val
	}
	if t.Writes, err = readWrites(ctx, tx, thread, ns, id); err != nil {
		return nil, fmt.Errorf("checkpoint %s of thread %s: %w", id, thread, err)
	}
	return t, nil
}

// value rebuilds a channel's JSON at a version: the full blob its delta chain starts
// from, then each delta's items.
func value(ctx context.Context, q querier, thread, ns, ch, version string) ([]byte, error) {
	var chain []graph.Blob
	for v := version; ; {
		b := graph.Blob{Channel: ch, Version: v}
		err := q.QueryRowContext(ctx, qBlob, thread, ns, ch, v).Scan(&b.Delta, &b.Base, &b.Data)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("blob %s@%s is missing", ch, v)
		}
		if err != nil {
			return nil, fmt.Errorf("read blob %s@%s: %w", ch, v, err)
		}
		chain = append(chain, b)
		if !b.Delta {
			break
		}
		v = b.Base
	}
	if len(chain) == 1 {
		return chain[0].Data, nil
	}
	return checkpoint.ConcatArrays(chain)
}

func readWrites(ctx context.Context, q querier, thread, ns, id string) ([]graph.PendingWrite, error) {
	rows, err := q.QueryContext(ctx, qReadWrites, thread, ns, id)
	if err != nil {
		return nil, fmt.Errorf("read pending writes: %w", err)
	}
	defer rows.Close()
	var out []graph.PendingWrite
	for rows.Next() {
		var w graph.PendingWrite
		if err := rows.Scan(&w.TaskID, &w.Node, &w.Seq, &w.Channel, &w.Data); err != nil {
			return nil, fmt.Errorf("read pending writes: %w", err)
		}
		out = append(out, w)
	}
	return out, rows.Err()
}

// List implements graph.Checkpointer.
func (c *Checkpointer) List(ctx context.Context, thread, ns string, opts graph.ListOptions) ([]graph.Checkpoint, error) {
	if opts.Before != "" {
		ok, err := exists(ctx, c.r, thread, ns, opts.Before)
		if err != nil {
			return nil, fmt.Errorf("list checkpoints of %s: %w", thread, err)
		}
		if !ok {
			return nil, fmt.Errorf("list checkpoints of %s: %w: %q", thread, graph.ErrUnknownBefore, opts.Before)
		}
	}
	q := `SELECT body FROM checkpoints WHERE thread = ? AND ns = ?`
	args := []any{thread, ns}
	if opts.Before != "" {
		q += ` AND id < ?`
		args = append(args, opts.Before)
	}
	if opts.Source != "" {
		q += ` AND source = ?`
		args = append(args, opts.Source)
	}
	q += ` ORDER BY id DESC`
	if opts.Limit > 0 {
		q += ` LIMIT ?`
		args = append(args, opts.Limit)
	}
	rows, err := c.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list checkpoints of %s: %w", thread, err)
	}
	defer rows.Close()
	var out []graph.Checkpoint
	for rows.Next() {
		var body []byte
		if err := rows.Scan(&body); err != nil {
			return nil, fmt.Errorf("list checkpoints of %s: %w", thread, err)
		}
		var cp graph.Checkpoint
		if err := json.Unmarshal(body, &cp); err != nil {
			return nil, fmt.Errorf("list checkpoints of %s: decode: %w", thread, err)
		}
		out = append(out, cp)
	}
	return out, rows.Err()
}

// DeleteThread implements graph.Checkpointer.
func (c *Checkpointer) DeleteThread(ctx context.Context, thread string) error {
	return c.inTx(ctx, func(tx txq) error { return deleteThread(ctx, tx, thread) })
}

func deleteThread(ctx context.Context, tx txq, thread string) error {
	for _, table := range []string{"heads", "checkpoints", "blobs", "writes"} {
		if _, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE thread = ?`, thread); err != nil {
			return fmt.Errorf("delete thread %s: %s: %w", thread, table, err)
		}
	}
	return nil
}
