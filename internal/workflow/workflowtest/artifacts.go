// Package workflowtest holds helpers for testing workflows without the
// platform: an in-memory artifact store keyed by the running node's thread.
package workflowtest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"sort"
	"sync"

	"weft/internal/graph"
	"weft/internal/workflow"
)

// Artifacts is an in-memory workflow.ArtifactStore. It keys artifacts by the
// running node's thread (graph.CurrentTask), so use it from inside nodes.
type Artifacts struct {
	mu     sync.Mutex
	byKey  map[string]workflow.Artifact // thread + "\x00" + key
	writes int
}

var _ workflow.ArtifactStore = (*Artifacts)(nil)

// NewArtifacts returns an empty store.
func NewArtifacts() *Artifacts { return &Artifacts{byKey: map[string]workflow.Artifact{}} }

// PutArtifact implements workflow.ArtifactStore.
func (s *Artifacts) PutArtifact(ctx context.Context, a workflow.Artifact) (workflow.ArtifactRef, error) {
	if err := a.Validate(); err != nil {
		return workflow.ArtifactRef{}, err
	}
	t, ok := graph.CurrentTask(ctx)
	if !ok {
		return workflow.ArtifactRef{}, errors.New("put artifact: not inside a running node")
	}
	sum := sha256.Sum256(a.Data)
	ref := workflow.ArtifactRef{ID: t.ThreadID + "/" + a.Key, Key: a.Key, Name: a.Name, ContentType: a.ContentType,
		Size: int64(len(a.Data)), SHA256: hex.EncodeToString(sum[:])}
	s.mu.Lock()
	defer s.mu.Unlock()
	k := t.ThreadID + "\x00" + a.Key
	if old, ok := s.byKey[k]; ok && string(old.Data) == string(a.Data) {
		return ref, nil
	}
	a.Data = append([]byte(nil), a.Data...)
	s.byKey[k] = a
	s.writes++
	return ref, nil
}

// Get returns a thread's artifact by key.
func (s *Artifacts) Get(thread, key string) (workflow.Artifact, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.byKey[thread+"\x00"+key]
	return a, ok
}

// Keys lists a thread's artifact keys, sorted.
func (s *Artifacts) Keys(thread string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for k := range s.byKey {
		if len(k) > len(thread) && k[:len(thread)+1] == thread+"\x00" {
			out = append(out, k[len(thread)+1:])
		}
	}
	sort.Strings(out)
	return out
}

// Writes counts the writes that changed something (a same-bytes rewrite does not count).
func (s *Artifacts) Writes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.writes
}
