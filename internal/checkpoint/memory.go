// Package checkpoint holds the in-memory Checkpointer, for unit tests and for
// embedding the engine without a database; the product's durable store is
// internal/postgres. Subpackage checkpointtest is the conformance suite every
// Checkpointer must pass. It imports internal/graph and the standard library.
package checkpoint

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"sync"

	"weft/internal/graph"
)

// Memory is an in-process Checkpointer. It keeps everything in maps behind
// one mutex and copies what goes in and out, so callers never share memory
// with it.
type Memory struct {
	mu      sync.Mutex
	threads map[string]map[string]*space // thread -> ns -> space
}

type space struct {
	head   string
	cps    map[string]*graph.Checkpoint
	blobs  map[[2]string]graph.Blob // (channel, version)
	writes map[string][]graph.PendingWrite
}

// NewMemory returns an empty in-memory saver.
func NewMemory() *Memory { return &Memory{threads: map[string]map[string]*space{}} }

var _ graph.Checkpointer = (*Memory)(nil)

func (m *Memory) space(thread, ns string, create bool) *space {
	t := m.threads[thread]
	if t == nil {
		if !create {
			return nil
		}
		t = map[string]*space{}
		m.threads[thread] = t
	}
	s := t[ns]
	if s == nil && create {
		s = &space{cps: map[string]*graph.Checkpoint{}, blobs: map[[2]string]graph.Blob{}, writes: map[string][]graph.PendingWrite{}}
		t[ns] = s
	}
	return s
}

// Put implements graph.Checkpointer.
func (m *Memory) Put(_ context.Context, req graph.PutRequest) error {
	cp := req.Checkpoint
	if cp.ID == "" || cp.ThreadID == "" {
		return fmt.Errorf("put checkpoint: id and thread id are required")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.space(cp.ThreadID, cp.NS, true)
	if s.head != req.ExpectHead {
		return fmt.Errorf("put checkpoint %s (expected head %q, found %q): %w", cp.ID, req.ExpectHead, s.head, graph.ErrConflict)
	}
	if _, dup := s.cps[cp.ID]; dup {
		return fmt.Errorf("put checkpoint %s: %w", cp.ID, graph.ErrConflict)
	}
	c := cloneCheckpoint(cp)
	s.cps[cp.ID] = &c
	for _, b := range req.Blobs {
		b.Data = slices.Clone(b.Data)
		s.blobs[[2]string{b.Channel, b.Version}] = b
	}
	if len(req.Writes) > 0 {
		s.writes[cp.ID] = upsertWrites(nil, req.Writes)
	}
	s.head = cp.ID
	return nil
}

func upsertWrites(have, add []graph.PendingWrite) []graph.PendingWrite {
	for _, w := range add {
		w.Data = slices.Clone(w.Data)
		i := slices.IndexFunc(have, func(h graph.PendingWrite) bool {
			return h.TaskID == w.TaskID && h.Seq == w.Seq && h.Channel == w.Channel
		})
		if i >= 0 {
			have[i] = w
		} else {
			have = append(have, w)
		}
	}
	return have
}

// PutWrites implements graph.Checkpointer.
func (m *Memory) PutWrites(_ context.Context, thread, ns, checkpointID string, writes []graph.PendingWrite) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.space(thread, ns, false)
	if s == nil || s.cps[checkpointID] == nil {
		return fmt.Errorf("put writes on checkpoint %s: %w", checkpointID, graph.ErrNotFound)
	}
	s.writes[checkpointID] = upsertWrites(s.writes[checkpointID], writes)
	return nil
}

// GetTuple implements graph.Checkpointer.
func (m *Memory) GetTuple(_ context.Context, thread, ns, checkpointID string) (*graph.Tuple, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.space(thread, ns, false)
	if s == nil {
		return nil, fmt.Errorf("thread %s: %w", thread, graph.ErrNotFound)
	}
	id := checkpointID
	if id == "" {
		id = s.head
	}
	cp := s.cps[id]
	if cp == nil {
		return nil, fmt.Errorf("checkpoint %q of thread %s: %w", id, thread, graph.ErrNotFound)
	}
	t := &graph.Tuple{Checkpoint: cloneCheckpoint(*cp), Values: make(map[string][]byte, len(cp.Versions))}
	for ch, v := range cp.Versions {
		val, err := s.value(ch, v)
		if err != nil {
			return nil, err
		}
		t.Values[ch] = val
	}
	for _, w := range s.writes[id] {
		w.Data = slices.Clone(w.Data)
		t.Writes = append(t.Writes, w)
	}
	return t, nil
}

// value rebuilds a channel's JSON at a version by concatenating its delta
// chain onto the full blob it starts from.
func (s *space) value(ch, version string) ([]byte, error) {
	var chain []graph.Blob
	for v := version; ; {
		b, ok := s.blobs[[2]string{ch, v}]
		if !ok {
			return nil, fmt.Errorf("blob %s@%s is missing", ch, v)
		}
		chain = append(chain, b)
		if !b.Delta {
			break
		}
		v = b.Base
	}
	if len(chain) == 1 {
		return slices.Clone(chain[0].Data), nil
	}
	return ConcatArrays(chain)
}

// ConcatArrays joins a delta chain, newest first as walked, into one JSON
// array: the full blob's items followed by each delta's, oldest first.
func ConcatArrays(chain []graph.Blob) ([]byte, error) {
	var items []json.RawMessage
	for i := len(chain) - 1; i >= 0; i-- {
		var part []json.RawMessage
		if err := json.Unmarshal(chain[i].Data, &part); err != nil {
			return nil, fmt.Errorf("blob %s@%s is not an array: %w", chain[i].Channel, chain[i].Version, err)
		}
		items = append(items, part...)
	}
	if items == nil {
		items = []json.RawMessage{}
	}
	return json.Marshal(items)
}

// List implements graph.Checkpointer.
func (m *Memory) List(_ context.Context, thread, ns string, opts graph.ListOptions) ([]graph.Checkpoint, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.space(thread, ns, false)
	if opts.Before != "" && (s == nil || s.cps[opts.Before] == nil) {
		return nil, fmt.Errorf("list checkpoints of %s: %w: %q", thread, graph.ErrUnknownBefore, opts.Before)
	}
	if s == nil {
		return nil, nil
	}
	ids := slices.Collect(maps.Keys(s.cps))
	sort.Sort(sort.Reverse(sort.StringSlice(ids)))
	var out []graph.Checkpoint
	for _, id := range ids {
		if opts.Before != "" && id >= opts.Before {
			continue
		}
		cp := s.cps[id]
		if opts.Source != "" && cp.Source != opts.Source {
			continue
		}
		out = append(out, cloneCheckpoint(*cp))
		if opts.Limit > 0 && len(out) == opts.Limit {
			break
		}
	}
	return out, nil
}

// DeleteThread implements graph.Checkpointer.
func (m *Memory) DeleteThread(_ context.Context, thread string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.threads, thread)
	return nil
}

// Prune implements graph.Checkpointer.
func (m *Memory) Prune(_ context.Context, opts graph.PruneOptions) (graph.PruneResult, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	threads := opts.Threads
	if threads == nil {
		threads = slices.Collect(maps.Keys(m.threads))
	}
	var removed graph.PruneResult
	for _, th := range threads {
		spaces := m.threads[th]
		if spaces == nil {
			continue
		}
		if !opts.OlderThan.IsZero() {
			root := spaces[""]
			if root != nil && root.cps[root.head] != nil && root.cps[root.head].CreatedAt.Before(opts.OlderThan) {
				for _, s := range spaces {
					removed.Checkpoints += len(s.cps)
				}
				removed.Threads++
				delete(m.threads, th)
				continue
			}
		}
		if opts.KeepLast <= 0 {
			continue
		}
		for _, s := range spaces {
			removed.Checkpoints += s.keepLast(opts.KeepLast)
		}
	}
	return removed, nil
}

func (s *space) keepLast(n int) int {
	ids := slices.Collect(maps.Keys(s.cps))
	sort.Sort(sort.Reverse(sort.StringSlice(ids)))
	keep := map[string]bool{s.head: true}
	for _, id := range ids {
		if len(keep) >= n {
			break
		}
		keep[id] = true
	}
	removed := 0
	for _, id := range ids {
		if !keep[id] {
			delete(s.cps, id)
			delete(s.writes, id)
			removed++
		}
	}
	live := map[[2]string]bool{}
	for _, cp := range s.cps {
		for ch, v := range cp.Versions {
			for {
				k := [2]string{ch, v}
				if live[k] {
					break
				}
				live[k] = true
				b, ok := s.blobs[k]
				if !ok || !b.Delta {
					break
				}
				v = b.Base
			}
		}
	}
	for k := range s.blobs {
		if !live[k] {
			delete(s.blobs, k)
		}
	}
	return removed
}

func cloneCheckpoint(c graph.Checkpoint) graph.Checkpoint {
	c.Versions = maps.Clone(c.Versions)
	c.Next = slices.Clone(c.Next)
	for i := range c.Next {
		c.Next[i].Arg = slices.Clone(c.Next[i].Arg)
	}
	if c.Barriers != nil {
		b := make(map[string][]string, len(c.Barriers))
		for k, v := range c.Barriers {
			b[k] = slices.Clone(v)
		}
		c.Barriers = b
	}
	if c.Resume != nil {
		r := make(map[string]json.RawMessage, len(c.Resume))
		for k, v := range c.Resume {
			r[k] = slices.Clone(v)
		}
		c.Resume = r
	}
	c.Nodes = slices.Clone(c.Nodes)
	return c
}
