package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"weft/internal/graph"
)

// Prune implements graph.Checkpointer: OlderThan drops whole threads whose root head is
// older; KeepLast keeps each space's head and newest checkpoints, and the blobs they still
// read (delta chains included). One transaction per thread.
func (c *Checkpointer) Prune(ctx context.Context, opts graph.PruneOptions) (graph.PruneResult, error) {
	threads := opts.Threads
	if threads == nil {
		var err error
		if threads, err = allThreads(ctx, c.r); err != nil {
			return graph.PruneResult{}, err
		}
	}
	var removed graph.PruneResult
	for _, th := range threads {
		err := c.inTx(ctx, func(tx txq) error {
			r, err := pruneThread(ctx, tx, th, opts)
			removed = removed.Add(r)
			return err
		})
		if err != nil {
			return removed, fmt.Errorf("prune thread %s: %w", th, err)
		}
	}
	return removed, nil
}

func allThreads(ctx context.Context, q querier) ([]string, error) {
	rows, err := q.QueryContext(ctx, `SELECT DISTINCT thread FROM heads ORDER BY thread`)
	if err != nil {
		return nil, fmt.Errorf("prune: list threads: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var th string
		if err := rows.Scan(&th); err != nil {
			return nil, fmt.Errorf("prune: list threads: %w", err)
		}
		out = append(out, th)
	}
	return out, rows.Err()
}

func pruneThread(ctx context.Context, tx txq, thread string, opts graph.PruneOptions) (graph.PruneResult, error) {
	var res graph.PruneResult
	if !opts.OlderThan.IsZero() {
		var created int64
		err := tx.QueryRowContext(ctx, `SELECT c.created_at FROM heads h JOIN checkpoints c
			ON c.thread = h.thread AND c.ns = h.ns AND c.id = h.head WHERE h.thread = ? AND h.ns = ''`, thread).Scan(&created)
		switch {
		case err == sql.ErrNoRows:
		case err != nil:
			return res, err
		case created < opts.OlderThan.UnixNano():
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM checkpoints WHERE thread = ?`, thread).Scan(&n); err != nil {
				return res, err
			}
			return graph.PruneResult{Checkpoints: n, Threads: 1}, deleteThread(ctx, tx, thread)
		}
	}
	if opts.KeepLast <= 0 {
		return res, nil
	}
	spaces, err := column(ctx, tx, `SELECT ns FROM heads WHERE thread = ? ORDER BY ns`, thread)
	if err != nil {
		return res, err
	}
	for _, ns := range spaces {
		n, err := keepLast(ctx, tx, thread, ns, opts.KeepLast)
		if err != nil {
			return res, err
		}
		res.Checkpoints += n
	}
	return res, nil
}

func column(ctx context.Context, q querier, query string, args ...any) ([]string, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// keepLast removes a space's checkpoints beyond the head and the newest n, their pending
// writes, and the blobs no kept checkpoint reads any more.
func keepLast(ctx context.Context, tx txq, thread, ns string, n int) (int, error) {
	head, err := headOf(ctx, tx, thread, ns)
	if err != nil {
		return 0, err
	}
	ids, err := column(ctx, tx, `SELECT id FROM checkpoints WHERE thread = ? AND ns = ? ORDER BY id DESC`, thread, ns)
	if err != nil {
		return 0, err
	}
	keep := map[string]bool{head: true}
	for _, id := range ids {
		if len(keep) >= n {
			break
		}
		keep[id] = true
	}
	removed := 0
	for _, id := range ids {
		if keep[id] {
			continue
		}
		for _, q := range []string{
			`DELETE FROM checkpoints WHERE thread = ? AND ns = ? AND id = ?`,
			`DELETE FROM writes WHERE thread = ? AND ns = ? AND checkpoint_id = ?`,
		} {
			if _, err := tx.ExecContext(ctx, q, thread, ns, id); err != nil {
				return removed, err
			}
		}
		removed++
	}
	if removed == 0 {
		return 0, nil
	}
	return removed, collectBlobs(ctx, tx, thread, ns)
}

// collectBlobs deletes the space's blobs that no remaining checkpoint reads, following
// delta chains back to their full blobs.
func collectBlobs(ctx context.Context, tx txq, thread, ns string) error {
	type key struct{ ch, v string }
	bases := map[key]string{} // delta blob -> its base ("" for a full blob)
	rows, err := tx.QueryContext(ctx, `SELECT channel, version, delta, base FROM blobs WHERE thread = ? AND ns = ?`, thread, ns)
	if err != nil {
		return err
	}
	for rows.Next() {
		var k key
		var delta bool
		var base string
		if err := rows.Scan(&k.ch, &k.v, &delta, &base); err != nil {
			rows.Close()
			return err
		}
		if !delta {
			base = ""
		}
		bases[k] = base
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	bodies, err := column(ctx, tx, `SELECT body FROM checkpoints WHERE thread = ? AND ns = ?`, thread, ns)
	if err != nil {
		return err
	}
	live := map[key]bool{}
	for _, body := range bodies {
		var cp struct {
			Versions map[string]string `json:"versions"`
		}
		if err := json.Unmarshal([]byte(body), &cp); err != nil {
			return fmt.Errorf("decode checkpoint: %w", err)
		}
		for ch, v := range cp.Versions {
			for k := (key{ch, v}); !live[k]; {
				live[k] = true
				base, ok := bases[k]
				if !ok || base == "" {
					break
				}
				k = key{ch, base}
			}
		}
	}
	for k := range bases {
		if live[k] {
			continue
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM blobs WHERE thread = ? AND ns = ? AND channel = ? AND version = ?`,
			thread, ns, k.ch, k.v); err != nil {
			return err
		}
	}
	return nil
}
