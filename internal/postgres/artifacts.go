package postgres

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"weft/db"
	"weft/internal/fault"
	"weft/internal/graph"
	"weft/internal/workflow"
)

// Artifacts keeps the files runs make, per tenant and thread (migration 00028).
type Artifacts struct{ db *DB }

// NewArtifacts returns the artifact store on d.
func NewArtifacts(d *DB) *Artifacts { return &Artifacts{db: d} }

// StoredArtifact is an artifact as stored: its reference, version and times.
type StoredArtifact struct {
	workflow.ArtifactRef
	Version   int
	CreatedAt time.Time
	UpdatedAt time.Time
	Data      []byte // Get only
}

// Put writes a thread's artifact (workflow.Artifact.Validate first): new, or replacing other
// bytes under the same key; the same bytes again write nothing. jobID names the run that
// wrote it.
func (s *Artifacts) Put(ctx context.Context, tenantID, threadID, jobID string, a workflow.Artifact) (workflow.ArtifactRef, error) {
	if tenantID == "" || threadID == "" {
		return workflow.ArtifactRef{}, fault.New(fault.Validation, fault.CodeValidation, "an artifact needs a tenant and a thread")
	}
	if err := a.Validate(); err != nil {
		return workflow.ArtifactRef{}, fault.Wrap(fault.Validation, fault.CodeValidation, err)
	}
	sum := sha256.Sum256(a.Data)
	q := s.db.querier(ctx)
	row, err := q.ArtifactPut(ctx, db.ArtifactPutParams{ID: uuid.Must(uuid.NewV7()).String(), TenantID: tenantID, ThreadID: threadID,
		Key: a.Key, Name: a.Name, ContentType: a.ContentType, Size: int32(len(a.Data)), Sha256: hex.EncodeToString(sum[:]),
		Data: a.Data, JobID: jobID})
	if err == nil {
		return workflow.ArtifactRef{ID: row.ID, Key: row.Key, Name: row.Name, ContentType: row.ContentType, Size: int64(row.Size), SHA256: row.Sha256}, nil
	}
	if err = translate(err); !errors.Is(err, graph.ErrNotFound) {
		return workflow.ArtifactRef{}, fmt.Errorf("put artifact %s: %w", a.Key, err)
	}
	// The same bytes were there already: nothing written.
	got, err := s.Get(ctx, tenantID, threadID, a.Key)
	if err != nil {
		return workflow.ArtifactRef{}, err
	}
	return got.ArtifactRef, nil
}

// Get reads a thread's artifact with its bytes (graph.ErrNotFound for none, or another
// tenant's).
func (s *Artifacts) Get(ctx context.Context, tenantID, threadID, key string) (StoredArtifact, error) {
	r, err := s.db.querier(ctx).ArtifactGetByKey(ctx, db.ArtifactGetByKeyParams{TenantID: tenantID, ThreadID: threadID, Key: key})
	if err != nil {
		return StoredArtifact{}, fmt.Errorf("artifact %s: %w", key, translate(err))
	}
	return StoredArtifact{ArtifactRef: workflow.ArtifactRef{ID: r.ID, Key: r.Key, Name: r.Name, ContentType: r.ContentType,
		Size: int64(r.Size), SHA256: r.Sha256}, Version: int(r.Version), CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, Data: r.Data}, nil
}

// List lists a thread's artifacts without their bytes, by key.
func (s *Artifacts) List(ctx context.Context, tenantID, threadID string) ([]StoredArtifact, error) {
	rows, err := s.db.querier(ctx).ArtifactListByThread(ctx, db.ArtifactListByThreadParams{TenantID: tenantID, ThreadID: threadID})
	if err != nil {
		return nil, fmt.Errorf("list artifacts: %w", translate(err))
	}
	out := make([]StoredArtifact, len(rows))
	for i, r := range rows {
		out[i] = StoredArtifact{ArtifactRef: workflow.ArtifactRef{ID: r.ID, Key: r.Key, Name: r.Name, ContentType: r.ContentType,
			Size: int64(r.Size), SHA256: r.Sha256}, Version: int(r.Version), CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
	}
	return out, nil
}
