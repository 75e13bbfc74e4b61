package postgres

import (
	"context"
	"fmt"
	"time"

	"weft/db"
	"weft/internal/runner"
)

// PendingReview is one job of the review inbox: a job waiting for review, when it paused,
// and what its subject names when it is an evaluation.
type PendingReview struct {
	Job      runner.Job
	PausedAt time.Time
	Supplier string // the evaluated supplier's name ("" when the subject is no evaluation)
	Project  string // the tender's name
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
		j, err := jobFromRow(r.Job)
		if err != nil {
			return nil, err
		}
		p := PendingReview{Job: j, Supplier: r.SupplierName, Project: r.ProjectName}
		if r.Job.PausedAt != nil {
			p.PausedAt = *r.Job.PausedAt
		}
		out = append(out, p)
	}
	return out, nil
}
