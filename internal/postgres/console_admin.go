package postgres

import (
	"context"
	"fmt"
	"math"

	"github.com/google/uuid"

	"weft/db"
	"weft/internal/runner"
)

// The console's admin pages: the audit log browser and the DLQ list's job details.

// Browse returns a tenant's entries newest first by time (then id), limit at a time (at most
// 500), older than the entry before (0: from the newest); next is the id of the last entry
// when more follow, 0 on the last page. Unlike List, every filter with a time range and the
// cursor is one index range (migrations/00008_audit_indexes.sql), so a page costs the same in
// a log of any size. A before that is not one of the tenant's entries yields nothing.
func (a *Audit) Browse(ctx context.Context, f AuditFilter, before int64, limit int) (entries []Entry, next int64, err error) {
	entries, next, err = a.page(ctx, auditByTime, f, before, false, limit)
	if err != nil {
		return nil, 0, fmt.Errorf("browse audit entries: %w", err)
	}
	return entries, next, nil
}

// BrowseNewer is Browse's page the other way: the limit entries just newer than the entry
// after, newest first; newer is the id of the first of them when newer ones still follow, 0
// when they reach the newest.
func (a *Audit) BrowseNewer(ctx context.Context, f AuditFilter, after int64, limit int) (entries []Entry, newer int64, err error) {
	entries, newer, err = a.page(ctx, auditByTime, f, after, true, limit)
	if err != nil {
		return nil, 0, fmt.Errorf("browse audit entries: %w", err)
	}
	return entries, newer, nil
}

// SubjectThreads maps those of the audit subjects that stand for a thread of the tenant to
// its id: a job id, a DLQ entry id or a thread id (a workflow audits what it does to a run
// on its thread's id). Others are left out.
func (a *Audit) SubjectThreads(ctx context.Context, tenantID string, subjects []string) (map[string]string, error) {
	out := map[string]string{}
	if len(subjects) == 0 {
		return out, nil
	}
	ids := make([]uuid.UUID, 0, len(subjects))
	names := make([]string, 0, len(subjects))
	seen := map[string]bool{}
	for _, s := range subjects {
		if s == "" || seen[s] {
			continue
		}
		seen[s] = true
		if id, ok := parseID(s); ok {
			ids = append(ids, id)
		}
		names = append(names, s)
	}
	rows, err := a.db.q.AuditLogSubjectThreads(ctx, db.AuditLogSubjectThreadsParams{TenantID: tenantID, Ids: ids, Names: names})
	if err != nil {
		return nil, fmt.Errorf("find the threads of audit subjects: %w", translate(err))
	}
	for _, r := range rows {
		out[r.Subject] = r.ThreadID
	}
	return out, nil
}

// DLQJob is the job of a DLQ entry as it is now.
type DLQJob struct {
	JobID      string
	ThreadID   string
	Subject    string
	Status     runner.Status
	RetryCount int
	// SupersededBy is the thread's newest job when it is a later one than this job (the
	// thread was started again since), else "".
	SupersededBy string
}

// DLQJobs returns the jobs of a tenant's DLQ entries by entry id (other tenants' ids and
// unknown ids are left out).
func (s *JobStore) DLQJobs(ctx context.Context, tenantID string, dlqIDs []string) (map[string]DLQJob, error) {
	out := map[string]DLQJob{}
	ids := parseIDs(dlqIDs)
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := s.db.q.DLQJobList(ctx, db.DLQJobListParams{TenantID: tenantID, Ids: ids})
	if err != nil {
		return nil, fmt.Errorf("load the jobs of DLQ entries: %w", translate(err))
	}
	for _, r := range rows {
		out[r.DlqID.String()] = DLQJob{JobID: r.JobID.String(), ThreadID: r.ThreadID, Subject: r.Subject,
			Status: runner.Status(r.Status), RetryCount: int(r.RetryCount), SupersededBy: r.SupersededBy}
	}
	return out, nil
}

// CountDLQ returns how many of a tenant's DLQ entries are in each status (DLQStatusRecorded,
// DLQStatusRetried, DLQStatusDiscarded), each count stopping at limit: a count of limit
// means limit or more. It reads one index range per status, whatever the tenant's entries
// number.
func (s *JobStore) CountDLQ(ctx context.Context, tenantID string, limit int) (map[string]int64, error) {
	rows, err := s.db.q.DLQCountByStatus(ctx, db.DLQCountByStatusParams{TenantID: tenantID,
		MaxRows: int32(min(max(limit, 0), math.MaxInt32)), Statuses: []string{DLQStatusRecorded, DLQStatusRetried, DLQStatusDiscarded}})
	if err != nil {
		return nil, fmt.Errorf("count DLQ entries: %w", translate(err))
	}
	out := make(map[string]int64, len(rows))
	for _, r := range rows {
		out[r.Status] = r.N
	}
	return out, nil
}

// JobAuditSubjects lists the ids that audit entries about a tenant's job or DLQ entry (id is
// either) carry as their subject: the job's and its DLQ entries'. An id that is neither (or
// another tenant's) has none.
func (s *JobStore) JobAuditSubjects(ctx context.Context, tenantID, id string) ([]string, error) {
	u, err := uuid.Parse(id)
	if err != nil {
		return nil, nil
	}
	ids, err := s.db.q.JobAuditSubjects(ctx, db.JobAuditSubjectsParams{TenantID: tenantID, ID: u})
	if err != nil {
		return nil, fmt.Errorf("audit subjects of job or entry %s: %w", id, translate(err))
	}
	return ids, nil
}

// ThreadAuditSubjects lists the ids that audit entries about a tenant's thread carry as
// their subject besides the thread id: its jobs' and their DLQ entries', newest first (at
// most limit). Another tenant's thread has none.
func (s *JobStore) ThreadAuditSubjects(ctx context.Context, tenantID, threadID string, limit int) ([]string, error) {
	rows, err := s.db.q.ThreadAuditSubjects(ctx, db.ThreadAuditSubjectsParams{TenantID: tenantID, ThreadID: threadID,
		MaxRows: int32(min(limit, math.MaxInt32))})
	if err != nil {
		return nil, fmt.Errorf("audit subjects of thread %s: %w", threadID, translate(err))
	}
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.ID
	}
	return out, nil
}
