package postgres

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"weft/db"
	"weft/internal/graph"
)

// Checkpointer is the durable graph.Checkpointer. Its layout (migrations 00002, 00009, 00013,
// 00014 and 00030): a head row per (thread, namespace), advanced by compare-and-set; a
// checkpoint row holding the whole values it wrote; a blob row per delta of an append
// channel, holding only the appended items and knowing its chain's root and position;
// segments joining 32 small deltas of a chain; one snapshot per small chain holding all its
// items up to a recent segment, so a head read joins a snapshot, a few segments and fewer
// than 32 deltas however long the thread; pending writes. Put, GetTuple, List and PutWrites
// are one SQL statement each (one round trip, one snapshot) whatever the thread's length: a
// Put without pending writes builds the segment and snapshot it completes in its own
// statement (checkpoint_put_append); one with pending writes (CheckpointPut) builds them
// after its commit. DeleteThread and Prune are short transactions.
// Concurrent Puts of different threads share transactions (group commit, groupcommit.go):
// each keeps its own compare-and-set outcome and returns once its checkpoint is durable.
//
// Checkpoint ids (and so versions) must be UUIDs in canonical form, as the engine makes them
// (UUIDv7: time-ordered, so "newest first" is "id descending").
type Checkpointer struct {
	db  *DB
	put *groupCommitter
}

// NewCheckpointer returns a Checkpointer on d.
func NewCheckpointer(d *DB) *Checkpointer { return &Checkpointer{db: d, put: d.committer()} }

var _ graph.Checkpointer = (*Checkpointer)(nil)

// pruneBatch is how many threads (OlderThan) or spaces (KeepLast) one Prune transaction
// handles, so a prune of every thread never locks them all at once.
const pruneBatch = 100

// meta is the JSON kept in checkpoints.meta: the checkpoint fields that are not columns.
type meta struct {
	Next       []graph.PlannedTask        `json:"next,omitempty"`
	Barriers   map[string][]string        `json:"barriers,omitempty"`
	Resume     map[string]json.RawMessage `json:"resume,omitempty"`
	SkipBefore bool                       `json:"skip_before,omitempty"`
	Nodes      []string                   `json:"nodes,omitempty"`
	ForkOf     string                     `json:"fork_of,omitempty"`
}

// parseID parses a checkpoint id; only the canonical form round-trips, so ids compare as
// the strings the engine holds.
func parseID(s string) (uuid.UUID, bool) {
	id, err := uuid.Parse(s)
	if err != nil || id.String() != s {
		return uuid.Nil, false
	}
	return id, true
}

// Put implements graph.Checkpointer.
func (c *Checkpointer) Put(ctx context.Context, req graph.PutRequest) error {
	cp := req.Checkpoint
	args, err := putArgs(req)
	if err != nil {
		return fmt.Errorf("put checkpoint %s of thread %s: %w", cp.ID, cp.ThreadID, err)
	}
	if req.ExpectHead != "" && args.ExpectHead == nil {
		// Not an id this store can hold, so not the head.
		return fmt.Errorf("put checkpoint %s (expected head %q): %w", cp.ID, req.ExpectHead, graph.ErrConflict)
	}
	row, err := c.put.put(ctx, args)
	switch {
	case err == nil:
		c.buildSegments(ctx, row)
		return nil
	case errors.Is(err, pgx.ErrNoRows):
		return fmt.Errorf("put checkpoint %s (expected head %q): %w", cp.ID, req.ExpectHead, graph.ErrConflict)
	case violates(err, codeNotNullViolation, "root"):
		return fmt.Errorf("put checkpoint %s of thread %s: a delta blob's base version is not stored", cp.ID, cp.ThreadID)
	}
	return fmt.Errorf("put checkpoint %s of thread %s: %w", cp.ID, cp.ThreadID, translate(err))
}

// segmentMaxBytes bounds the deltas one chain segment joins (migration 00013): segments
// pay off where rows are many and small (a reader's cost is mostly per row), and would
// double the storage of large items for little gain.
const segmentMaxBytes = 4096

// buildSegments builds the chain segments (and snapshots) a committed CheckpointPut completed
// (CheckpointSegmentBuild decides whether each is worth building), in a transaction that first holds the space's
// head against Prune and DeleteThread, so the deltas it joins cannot be deleted between its
// read and its commit (a prune that runs after it deletes the segments it no longer needs).
// Segments only make later reads cheaper: a failure is logged and changes no value read.
func (c *Checkpointer) buildSegments(ctx context.Context, row db.CheckpointPutRow) {
	if len(row.SegmentChannels) == 0 {
		return
	}
	err := c.db.inTx(ctx, func(q *db.Queries) error {
		if _, err := q.CheckpointHeadKeyShare(ctx, row.SpaceID); err != nil {
			if errors.Is(err, pgx.ErrNoRows) {
				return nil // the thread was deleted meanwhile
			}
			return err
		}
		for i, ch := range row.SegmentChannels {
			if _, err := q.CheckpointSegmentBuild(ctx, db.CheckpointSegmentBuildParams{SpaceID: row.SpaceID,
				Root: row.SegmentRoots[i], Channel: ch, Hi: row.SegmentHis[i], MaxBytes: segmentMaxBytes}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		c.db.log.Warn("build delta chain segments", "channels", row.SegmentChannels, "positions", row.SegmentHis, "err", err)
	}
}

// putArgs validates a PutRequest and lays it out as the statement's parameters.
func putArgs(req graph.PutRequest) (db.CheckpointPutParams, error) {
	cp := req.Checkpoint
	if cp.ID == "" || cp.ThreadID == "" {
		return db.CheckpointPutParams{}, errors.New("id and thread id are required")
	}
	id, ok := parseID(cp.ID)
	if !ok {
		return db.CheckpointPutParams{}, fmt.Errorf("id %q is not a UUID", cp.ID)
	}
	args := db.CheckpointPutParams{
		ID: id, ThreadID: cp.ThreadID, Ns: cp.NS, CreatedAt: cp.CreatedAt,
		Step: int32(cp.Step), Source: cp.Source,
	}
	if req.ExpectHead != "" {
		if h, ok := parseID(req.ExpectHead); ok {
			args.ExpectHead = &h
		}
	}
	if cp.ParentID != "" {
		p, ok := parseID(cp.ParentID)
		if !ok {
			return args, fmt.Errorf("parent id %q is not a UUID", cp.ParentID)
		}
		args.ParentID = &p
	}
	// Stored with "" for the checkpoint's own id (the channels it changed).
	versions := make(map[string]string, len(cp.Versions))
	for ch, v := range cp.Versions {
		if v == cp.ID {
			versions[ch] = ""
			continue
		}
		if _, ok := parseID(v); !ok {
			return args, fmt.Errorf("version %q of channel %q is not a checkpoint id", v, ch)
		}
		versions[ch] = v
	}
	var err error
	if args.Versions, err = json.Marshal(versions); err != nil {
		return args, fmt.Errorf("encode versions: %w", err)
	}
	m := meta{Next: cp.Next, Barriers: cp.Barriers, Resume: cp.Resume, SkipBefore: cp.SkipBefore, Nodes: cp.Nodes, ForkOf: cp.ForkOf}
	if args.Meta, err = json.Marshal(m); err != nil {
		return args, fmt.Errorf("encode checkpoint metadata: %w", err)
	}
	// Full values at the checkpoint's own version go in its row; the others (deltas) in
	// blob rows (migration 00014).
	args.InlineChannels, args.InlineData = []string{}, [][]byte{}
	args.BlobChannels, args.BlobVersions = []string{}, []uuid.UUID{}
	args.BlobBases, args.BlobData = []uuid.UUID{}, [][]byte{}
	for _, b := range req.Blobs {
		v, ok := parseID(b.Version)
		if !ok {
			return args, fmt.Errorf("blob %s: version %q is not a checkpoint id", b.Channel, b.Version)
		}
		base := uuid.Nil // no base: a full blob
		if b.Delta {
			if base, ok = parseID(b.Base); !ok {
				return args, fmt.Errorf("delta blob %s@%s: base %q is not a checkpoint id", b.Channel, b.Version, b.Base)
			}
		} else if v == id {
			if !slices.Contains(args.InlineChannels, b.Channel) { // the first one counts, as in a blob row
				args.InlineChannels, args.InlineData = append(args.InlineChannels, b.Channel), append(args.InlineData, nonNil(b.Data))
			}
			continue
		}
		args.BlobChannels, args.BlobVersions = append(args.BlobChannels, b.Channel), append(args.BlobVersions, v)
		args.BlobBases, args.BlobData = append(args.BlobBases, base), append(args.BlobData, nonNil(b.Data))
	}
	ws := dedupeWrites(req.Writes)
	args.WriteTaskIds, args.WriteSeqs, args.WriteChannels = make([]string, len(ws)), make([]int32, len(ws)), make([]string, len(ws))
	args.WriteNodes, args.WriteData = make([]string, len(ws)), make([][]byte, len(ws))
	for i, w := range ws {
		args.WriteTaskIds[i], args.WriteSeqs[i], args.WriteChannels[i] = w.TaskID, int32(w.Seq), w.Channel
		args.WriteNodes[i], args.WriteData[i] = w.Node, nonNil(w.Data)
	}
	return args, nil
}

// nonNil keeps a nil byte slice from becoming SQL NULL.
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// dedupeWrites keeps the last of writes with the same (task, seq, channel), in first-seen
// order: one upsert statement may not touch a row twice.
func dedupeWrites(ws []graph.PendingWrite) []graph.PendingWrite {
	type key struct {
		task, channel string
		seq           int
	}
	seen := make(map[key]int, len(ws))
	out := make([]graph.PendingWrite, 0, len(ws))
	for _, w := range ws {
		k := key{w.TaskID, w.Channel, w.Seq}
		if i, ok := seen[k]; ok {
			out[i] = w
			continue
		}
		seen[k] = len(out)
		out = append(out, w)
	}
	return out
}

// PutWrites implements graph.Checkpointer.
func (c *Checkpointer) PutWrites(ctx context.Context, thread, ns, checkpointID string, writes []graph.PendingWrite) error {
	id, ok := parseID(checkpointID)
	if !ok {
		return fmt.Errorf("put writes on checkpoint %s: %w", checkpointID, graph.ErrNotFound)
	}
	if len(writes) == 0 {
		found, err := c.db.q.CheckpointExists(ctx, db.CheckpointExistsParams{ID: id, ThreadID: thread, Ns: ns})
		if err != nil {
			return fmt.Errorf("put writes on checkpoint %s: %w", checkpointID, translate(err))
		}
		if !found {
			return fmt.Errorf("put writes on checkpoint %s: %w", checkpointID, graph.ErrNotFound)
		}
		return nil
	}
	ws := dedupeWrites(writes)
	args := db.CheckpointWritesPutParams{
		CheckpointID: id, ThreadID: thread, Ns: ns,
		TaskIds: make([]string, len(ws)), Seqs: make([]int32, len(ws)), Channels: make([]string, len(ws)),
		Nodes: make([]string, len(ws)), Data: make([][]byte, len(ws)),
	}
	for i, w := range ws {
		args.TaskIds[i], args.Seqs[i], args.Channels[i] = w.TaskID, int32(w.Seq), w.Channel
		args.Nodes[i], args.Data[i] = w.Node, nonNil(w.Data)
	}
	n, err := c.db.q.CheckpointWritesPut(ctx, args)
	if err != nil {
		return fmt.Errorf("put writes on checkpoint %s: %w", checkpointID, translate(err))
	}
	if n == 0 {
		return fmt.Errorf("put writes on checkpoint %s: %w", checkpointID, graph.ErrNotFound)
	}
	return nil
}

// GetTuple implements graph.Checkpointer. One statement reads the checkpoint, the value of
// every channel and the pending writes. A delta chain that is not forked is read as its root,
// its segments up to the tip and the few deltas after them, joined into one array by the
// server; a forked chain comes back row by row and is assembled here (assembleValues).
func (c *Checkpointer) GetTuple(ctx context.Context, thread, ns, checkpointID string) (*graph.Tuple, error) {
	args := db.CheckpointTupleGetParams{ThreadID: thread, Ns: ns}
	notFound := fmt.Errorf("thread %s: %w", thread, graph.ErrNotFound)
	if checkpointID != "" {
		id, ok := parseID(checkpointID)
		notFound = fmt.Errorf("checkpoint %q of thread %s: %w", checkpointID, thread, graph.ErrNotFound)
		if !ok {
			return nil, notFound
		}
		args.ID = &id
	}
	row, err := c.db.q.CheckpointTupleGet(ctx, args)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound
	}
	if err != nil {
		return nil, fmt.Errorf("get checkpoint of thread %s: %w", thread, translate(err))
	}
	cp, err := checkpointFromRow(thread, ns, row.ID, row.ParentID, row.CreatedAt, row.Step, row.Source, row.Versions, row.Meta)
	if err != nil {
		return nil, err
	}
	values, err := assembleValues(cp.Versions, row.BlobChannels, row.BlobVersions, row.BlobBases, row.BlobData)
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s of thread %s: %w", cp.ID, thread, err)
	}
	t := &graph.Tuple{Checkpoint: cp, Values: values}
	if n := len(row.WriteTaskIds); n > 0 {
		t.Writes = make([]graph.PendingWrite, n)
		for i := range n {
			t.Writes[i] = graph.PendingWrite{TaskID: row.WriteTaskIds[i], Node: row.WriteNodes[i],
				Seq: int(row.WriteSeqs[i]), Channel: row.WriteChannels[i], Data: row.WriteData[i]}
		}
		// A deterministic order: by task, then seq (a task's writes as it made them), then
		// channel.
		slices.SortFunc(t.Writes, func(a, b graph.PendingWrite) int {
			return cmp.Or(strings.Compare(a.TaskID, b.TaskID), cmp.Compare(a.Seq, b.Seq), strings.Compare(a.Channel, b.Channel))
		})
	}
	return t, nil
}

// checkpointFromRow maps a checkpoints row back to the engine's type.
func checkpointFromRow(thread, ns string, id uuid.UUID, parent *uuid.UUID, created time.Time, step int32,
	source string, versions, metaJSON []byte) (graph.Checkpoint, error) {
	cp := graph.Checkpoint{ID: id.String(), ThreadID: thread, NS: ns, Step: int(step), Source: source, CreatedAt: created.UTC()}
	if parent != nil {
		cp.ParentID = parent.String()
	}
	if err := json.Unmarshal(versions, &cp.Versions); err != nil {
		return cp, fmt.Errorf("checkpoint %s: decode versions: %w", cp.ID, err)
	}
	for ch, v := range cp.Versions {
		if v == "" {
			cp.Versions[ch] = cp.ID
		}
	}
	var m meta
	if err := json.Unmarshal(metaJSON, &m); err != nil {
		return cp, fmt.Errorf("checkpoint %s: decode metadata: %w", cp.ID, err)
	}
	cp.Next, cp.Barriers, cp.Resume, cp.SkipBefore, cp.Nodes, cp.ForkOf = m.Next, m.Barriers, m.Resume, m.SkipBefore, m.Nodes, m.ForkOf
	if cp.Source == graph.SourceResume {
		cp.ForkOf = "" // written before the engine stopped copying its base's mark onto a resume
	}
	return cp, nil
}

// assembleValues rebuilds each channel's JSON at its version from the blob rows read: a
// full blob as is, a delta chain by following base pointers from the tip back to its full
// blob (skipping rows of sibling fork branches the range scan also returned) and
// concatenating the arrays oldest first.
func assembleValues(versions map[string]string, channels []string, vers, bases []uuid.UUID, data [][]byte) (map[string][]byte, error) {
	type key struct {
		channel string
		version uuid.UUID
	}
	type blob struct {
		base uuid.UUID
		data []byte
	}
	rows := make(map[key]blob, len(channels))
	for i, ch := range channels {
		rows[key{ch, vers[i]}] = blob{bases[i], data[i]}
	}
	values := make(map[string][]byte, len(versions))
	var chain [][]byte
	for ch, v := range versions {
		tip, ok := parseID(v)
		if !ok {
			return nil, fmt.Errorf("version %q of channel %q is not a checkpoint id", v, ch)
		}
		chain = chain[:0]
		for cur := tip; ; {
			b, ok := rows[key{ch, cur}]
			if !ok {
				return nil, fmt.Errorf("blob %s@%s is missing", ch, cur)
			}
			chain = append(chain, b.data)
			if b.base == uuid.Nil {
				break
			}
			if len(chain) > len(channels) {
				return nil, fmt.Errorf("delta chain of %s@%s loops", ch, tip)
			}
			cur = b.base
		}
		if len(chain) == 1 {
			values[ch] = chain[0]
			continue
		}
		joined, err := concatArrays(chain)
		if err != nil {
			return nil, fmt.Errorf("channel %s@%s: %w", ch, tip, err)
		}
		values[ch] = joined
	}
	return values, nil
}

// concatArrays joins a delta chain, newest first as walked, into one JSON array: the full
// blob's items followed by each delta's, oldest first. It splices the arrays' bytes instead
// of decoding every item (checkpoint.ConcatArrays's result, without its cost on long
// histories); a null part (an append channel's nil slice) counts as empty.
func concatArrays(chain [][]byte) ([]byte, error) {
	size := 2
	for _, p := range chain {
		size += len(p) + 1
	}
	out := make([]byte, 1, size)
	out[0] = '['
	for i := len(chain) - 1; i >= 0; i-- {
		p := bytes.TrimSpace(chain[i])
		if string(p) == "null" {
			continue
		}
		if len(p) < 2 || p[0] != '[' || p[len(p)-1] != ']' {
			return nil, fmt.Errorf("blob %d of the delta chain is not a JSON array", len(chain)-1-i)
		}
		inner := bytes.TrimSpace(p[1 : len(p)-1])
		if len(inner) == 0 {
			continue
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(out, inner...)
	}
	return append(out, ']'), nil
}

// List implements graph.Checkpointer.
func (c *Checkpointer) List(ctx context.Context, thread, ns string, opts graph.ListOptions) ([]graph.Checkpoint, error) {
	args := db.CheckpointListParams{ThreadID: thread, Ns: ns}
	if opts.Before != "" {
		b, ok := parseID(opts.Before)
		if !ok {
			return nil, fmt.Errorf("list checkpoints of %s: %w: %q", thread, graph.ErrUnknownBefore, opts.Before)
		}
		found, err := c.db.q.CheckpointExists(ctx, db.CheckpointExistsParams{ID: b, ThreadID: thread, Ns: ns})
		if err != nil {
			return nil, fmt.Errorf("list checkpoints of %s: %w", thread, translate(err))
		}
		if !found {
			return nil, fmt.Errorf("list checkpoints of %s: %w: %q", thread, graph.ErrUnknownBefore, opts.Before)
		}
		args.Before = &b
	}
	if opts.Source != "" {
		args.Source = &opts.Source
	}
	if opts.Limit > 0 {
		limit := int32(min(opts.Limit, 1<<31-1))
		args.MaxRows = &limit
	}
	rows, err := c.db.q.CheckpointList(ctx, args)
	if err != nil {
		return nil, fmt.Errorf("list checkpoints of thread %s: %w", thread, translate(err))
	}
	if len(rows) == 0 {
		return nil, nil
	}
	out := make([]graph.Checkpoint, len(rows))
	for i, r := range rows {
		if out[i], err = checkpointFromRow(thread, ns, r.ID, r.ParentID, r.CreatedAt, r.Step, r.Source, r.Versions, r.Meta); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// DeleteThread implements graph.Checkpointer. Deleting the heads first waits for a Put or
// PutWrites in flight on the thread and makes later ones fail (or start a new thread).
func (c *Checkpointer) DeleteThread(ctx context.Context, thread string) error {
	err := c.db.inTx(ctx, func(q *db.Queries) error {
		spaces, err := q.CheckpointHeadsDeleteThread(ctx, thread)
		if err != nil || len(spaces) == 0 {
			return err
		}
		_, err = q.CheckpointsDelete(ctx, spaces)
		return err
	})
	if err != nil {
		return fmt.Errorf("delete thread %s: %w", thread, translate(err))
	}
	return nil
}

// Prune implements graph.Checkpointer. OlderThan deletes whole threads (every namespace)
// whose root-namespace head is older; KeepLast then keeps each remaining space's newest
// checkpoints (the head always) and the blobs they still need, delta chain bases included.
// Both work through batches of threads or spaces, one short transaction each.
func (c *Checkpointer) Prune(ctx context.Context, opts graph.PruneOptions) (graph.PruneResult, error) {
	var removed graph.PruneResult
	if opts.Threads != nil && len(opts.Threads) == 0 {
		return removed, nil
	}
	if !opts.OlderThan.IsZero() {
		for {
			var n int64
			var spaces []int64
			threads := 0
			err := c.db.inTx(ctx, func(q *db.Queries) error {
				heads, err := q.CheckpointHeadsDeleteExpired(ctx, db.CheckpointHeadsDeleteExpiredParams{
					Cutoff: opts.OlderThan, Threads: opts.Threads, MaxThreads: pruneBatch})
				if err != nil || len(heads) == 0 {
					return err
				}
				for _, h := range heads {
					spaces = append(spaces, h.SpaceID)
					if h.Root {
						threads++
					}
				}
				n, err = q.CheckpointsDelete(ctx, spaces)
				return err
			})
			if err != nil {
				return removed, fmt.Errorf("prune threads older than %s: %w", opts.OlderThan.Format(time.RFC3339), translate(err))
			}
			removed = removed.Add(graph.PruneResult{Checkpoints: int(n), Threads: threads})
			if len(spaces) == 0 {
				break
			}
		}
	}
	if opts.KeepLast > 0 {
		keep := int64(opts.KeepLast)
		for after := int64(0); ; {
			spaces, err := c.db.q.CheckpointHeadsOverLimit(ctx, db.CheckpointHeadsOverLimitParams{
				After: after, Threads: opts.Threads, Keep: keep, MaxSpaces: pruneBatch})
			if err != nil {
				return removed, fmt.Errorf("prune checkpoints: %w", translate(err))
			}
			if len(spaces) == 0 {
				break
			}
			var n int64
			err = c.db.inTx(ctx, func(q *db.Queries) error {
				locked, err := q.CheckpointHeadsLock(ctx, spaces)
				if err != nil || len(locked) == 0 {
					return err
				}
				if n, err = q.CheckpointsPrune(ctx, db.CheckpointsPruneParams{SpaceIds: locked, Keep: keep}); err != nil {
					return err
				}
				_, err = q.CheckpointBlobsCollect(ctx, locked)
				return err
			})
			if err != nil {
				return removed, fmt.Errorf("prune checkpoints: %w", translate(err))
			}
			removed.Checkpoints += int(n)
			after = spaces[len(spaces)-1]
		}
	}
	return removed, nil
}
