package postgres

import (
	"context"
	"fmt"
)

// FinishedThreads lists the threads whose jobs have all ended.
func (s *JobStore) FinishedThreads(ctx context.Context) ([]string, error) {
	ids, err := s.db.q.JobFinishedThreads(ctx)
	if err != nil {
		return nil, fmt.Errorf("list finished threads: %w", translate(err))
	}
	return ids, nil
}
