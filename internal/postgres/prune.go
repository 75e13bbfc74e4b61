package postgres

import (
	"context"
	"fmt"

	"weft/db"
	"weft/internal/runner"
)

// FinishedThreads lists up to limit threads whose jobs have all ended, after the thread id
// after ("" for the first page), in thread id order.
func (s *JobStore) FinishedThreads(ctx context.Context, after string, limit int) ([]string, error) {
	ids, err := s.db.q.JobFinishedThreads(ctx, db.JobFinishedThreadsParams{After: after, MaxRows: int32(limit)})
	if err != nil {
		return nil, fmt.Errorf("list finished threads: %w", translate(err))
	}
	return ids, nil
}

// LatestForThread returns the newest job of a tenant's thread
// (graph.ErrNotFound when the thread is not the tenant's).
func (s *JobStore) LatestForThread(ctx context.Context, tenantID, threadID string) (runner.Job, error) {
	row, err := s.db.q.JobLatestByThread(ctx, db.JobLatestByThreadParams{TenantID: tenantID, ThreadID: threadID})
	if err != nil {
		return runner.Job{}, fmt.Errorf("thread %s: %w", threadID, translate(err))
	}
	return jobFromRow(row)
}
