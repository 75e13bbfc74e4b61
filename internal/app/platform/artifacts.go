package platform

import (
	"context"
	"errors"

	"weft/internal/postgres"
	"weft/internal/runner"
	"weft/internal/workflow"
)

// runArtifacts is the workflow.ArtifactStore the workflows' nodes get: it stores under the
// tenant, thread and job of the running job, never ones a node names.
type runArtifacts struct{ store *postgres.Artifacts }

var _ workflow.ArtifactStore = runArtifacts{}

// PutArtifact implements workflow.ArtifactStore.
func (r runArtifacts) PutArtifact(ctx context.Context, a workflow.Artifact) (workflow.ArtifactRef, error) {
	j, ok := runner.JobFromContext(ctx)
	if !ok {
		return workflow.ArtifactRef{}, errors.New("put artifact: not inside a job")
	}
	return r.store.Put(ctx, j.TenantID, j.ThreadID, j.ID, a)
}

// RunArtifacts is the artifact store a workflow's nodes write through: the running job's
// tenant, thread and job.
func (a *App) RunArtifacts() workflow.ArtifactStore { return runArtifacts{store: a.Artifacts} }
