package postgres

import (
	"context"
	"fmt"
	"time"

	"weft/db"
	"weft/internal/runner"
)

// PendingReview is one job of the review inbox: a job waiting for review, and when it paused.
type PendingReview struct {
	Job      runner.Job
	PausedAt time.Time
}

// PendingReviews lists a tenant's jobs waiting for review (of one workflow, or all when
// workflow is ""), longest waiting first, at most limit of them (0: the page maximum).
func (s *JobStore) PendingReviews(ctx context.Context, tenantID, workflow string, limit int) ([]PendingReview, error) {
	p := db.JobReviewListParams{TenantID: tenantID, MaxRows: pageSize(limit)}
	if workflow != "" {
		p.Workflow = &workflow
	}
	rows, err := s.db.q.JobReviewList(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("list pending reviews: %w", translate(err))
	}
	out := make([]PendingReview, 0, len(rows))
	for _, r := range rows {
		j, err := jobFromRow(r)
		if err != nil {
			return nil, err
		}
		p := PendingReview{Job: j}
		if r.PausedAt != nil {
			p.PausedAt = *r.PausedAt
		}
		out = append(out, p)
	}
	return out, nil
}
