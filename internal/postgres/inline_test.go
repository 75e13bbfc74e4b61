package postgres_test

import (
	"fmt"
	"testing"

	"weft/internal/graph"
	"weft/internal/postgres"
)

// Tests of inline values (migration 00014): full values live in their checkpoint's row.

// TestGroupCommitMixedStatements queues, behind a busy commit slot, Puts of both kinds:
// steps whose values are all inline (CheckpointPutStep) and Puts with a delta blob and
// pending writes (CheckpointPut). They commit in one transaction, and each thread then reads
// back exactly what it wrote.
func TestGroupCommitMixedStatements(t *testing.T) {
	t.Parallel()
	b := gcSetup(t)
	names, heads := b.threads("mixed", 16)
	_, holderHeads := b.threads("holder", 1)
	// Odd threads get an append chain first: a full root, so their next Put can be a delta.
	for i := 1; i < len(names); i += 2 {
		req := gcPut(names[i], heads[i])
		id := req.Checkpoint.ID
		req.Checkpoint.Versions["log"] = id
		req.Blobs = append(req.Blobs, graph.Blob{Channel: "log", Version: id, Data: []byte(`["root"]`)})
		if err := b.s.Put(b.ctx, req); err != nil {
			t.Fatal(err)
		}
		heads[i] = id
	}
	txs0, _, _ := postgres.GroupCommitStats(b.s)
	reqs := make([]graph.PutRequest, len(names))
	for i, name := range names {
		reqs[i] = gcPut(name, heads[i])
		if i%2 == 1 {
			id := reqs[i].Checkpoint.ID
			reqs[i].Checkpoint.Versions["log"] = id
			reqs[i].Blobs = append(reqs[i].Blobs, graph.Blob{Channel: "log", Version: id, Delta: true, Base: heads[i],
				Data: []byte(fmt.Sprintf(`["item %d"]`, i))})
			reqs[i].Writes = []graph.PendingWrite{{TaskID: "t1", Node: "work", Channel: "n", Data: []byte(`"pending"`)}}
		}
	}
	b.queue(b.hold("holder0", holderHeads[0]), reqs)()
	if txs, _, _ := postgres.GroupCommitStats(b.s); txs-txs0 != 2 {
		t.Errorf("the holder and 16 queued Puts took %d transactions, want 2", txs-txs0)
	}
	for i, name := range names {
		tup, err := b.s.GetTuple(b.ctx, name, "", "")
		if err != nil {
			t.Fatal(err)
		}
		if tup.Checkpoint.ID != reqs[i].Checkpoint.ID || string(tup.Values["n"]) != `"`+name+`"` {
			t.Errorf("%s: head %s n=%s, want %s n=%q", name, tup.Checkpoint.ID, tup.Values["n"], reqs[i].Checkpoint.ID, name)
		}
		if i%2 == 1 {
			if want := fmt.Sprintf(`["root","item %d"]`, i); string(tup.Values["log"]) != want || len(tup.Writes) != 1 {
				t.Errorf("%s: log=%s with %d writes, want %s with 1", name, tup.Values["log"], len(tup.Writes), want)
			}
		} else if len(tup.Writes) != 0 || tup.Values["log"] != nil {
			t.Errorf("%s: a step wrote log=%s and %d writes", name, tup.Values["log"], len(tup.Writes))
		}
	}
}

// TestValuesInBlobRowsStillRead moves a thread's inline values into blob rows, the layout
// before migration 00014 (and what Prune leaves for values it keeps), and checks every
// checkpoint reads the same values as before.
func TestValuesInBlobRowsStillRead(t *testing.T) {
	t.Parallel()
	b := setup(t)
	th := newThread(t, b.cp, "legacy")
	for i := range 40 {
		th.step(i)
	}
	list, err := b.cp.List(b.ctx, "legacy", "", graph.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	before := map[string]map[string][]byte{}
	for _, c := range list {
		tup, err := b.cp.GetTuple(b.ctx, "legacy", "", c.ID)
		if err != nil {
			t.Fatal(err)
		}
		before[c.ID] = tup.Values
	}
	tag, err := b.db.Pool().Exec(b.ctx, `WITH moved AS (
		INSERT INTO checkpoint_blobs (space_id, version, root, base, pos, channel, data)
		SELECT c.space_id, c.id, c.id, NULL, 0, u.channel, u.data
		FROM checkpoints c CROSS JOIN LATERAL unnest(c.blob_channels, c.blob_data) AS u (channel, data)
		RETURNING 1
	) UPDATE checkpoints SET blob_channels = NULL, blob_data = NULL WHERE blob_channels IS NOT NULL`)
	if err != nil {
		t.Fatal(err)
	}
	if tag.RowsAffected() != int64(len(list)) {
		t.Fatalf("moved the values of %d checkpoints, want %d", tag.RowsAffected(), len(list))
	}
	for id, want := range before {
		tup, err := b.cp.GetTuple(b.ctx, "legacy", "", id)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(tup.Values) != fmt.Sprint(want) {
			t.Fatalf("checkpoint %s reads %s from blob rows, %s inline", id, tup.Values, want)
		}
	}
	th.step(40) // and the thread goes on
	if tup, err := b.cp.GetTuple(b.ctx, "legacy", "", ""); err != nil || len(logOf(t, tup)) != 41 {
		t.Fatalf("after one more step: %v, log %v", err, tup)
	}
}
