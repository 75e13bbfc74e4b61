package runner

import (
	"fmt"

	"weft/internal/fault"
)

// Status is a job's state.
type Status string

// The job statuses (seed 000 §5, DESIGN "Durable execution").
const (
	Queued         Status = "queued"
	Running        Status = "running"
	WaitingReview  Status = "waiting_review"
	RetryScheduled Status = "retry_scheduled"
	DLQPending     Status = "dlq_pending"
	DLQRecorded    Status = "dlq_recorded"
	Failed         Status = "failed"
	Succeeded      Status = "succeeded"
)

// Statuses lists every status, in lifecycle order.
var Statuses = []Status{Queued, Running, WaitingReview, RetryScheduled, DLQPending, DLQRecorded, Failed, Succeeded}

// Lasting are the statuses a job stays in, in Statuses' order: the DLQ subflow's two
// (dlq_pending, dlq_recorded) last only within the transaction that fails a job.
var Lasting = []Status{Queued, Running, WaitingReview, RetryScheduled, Failed, Succeeded}

// transitions is the whole status machine; nothing else decides legality.
//
//	queued → running                       a worker claims it
//	running → waiting_review → running      an interrupt, then a valid resume
//	running → succeeded                     the graph reached END
//	running → retry_scheduled → running     a transient error with retry_count < 3
//	running → dlq_pending → dlq_recorded → failed   everything else
//	running → queued                        the lease expired (the worker died)
//	failed → queued                         an admin retry
var transitions = map[Status][]Status{
	Queued:         {Running},
	Running:        {WaitingReview, Succeeded, RetryScheduled, DLQPending, Queued},
	WaitingReview:  {Running},
	RetryScheduled: {Running},
	DLQPending:     {DLQRecorded},
	DLQRecorded:    {Failed},
	Failed:         {Queued},
}

// IllegalTransitionError rejects a status change the machine does not allow.
type IllegalTransitionError struct{ From, To Status }

func (e *IllegalTransitionError) Error() string {
	return fmt.Sprintf("%s: job status %s → %s is not allowed", fault.CodeIllegalTransition, e.From, e.To)
}

// ErrorClass makes the rejection a business error for fault.Classify.
func (e *IllegalTransitionError) Unwrap() error {
	return fault.New(fault.Business, fault.CodeIllegalTransition, "illegal status transition")
}

// CheckTransition is the one place that decides whether from → to is legal.
func CheckTransition(from, to Status) error {
	for _, s := range transitions[from] {
		if s == to {
			return nil
		}
	}
	return &IllegalTransitionError{From: from, To: to}
}

// Valid reports whether s is a known status.
func (s Status) Valid() bool {
	for _, x := range Statuses {
		if x == s {
			return true
		}
	}
	return false
}

// Words is s as a message to a person says it: "waiting for review", not "waiting_review".
func (s Status) Words() string {
	switch s {
	case WaitingReview:
		return "waiting for review"
	case RetryScheduled:
		return "a retry is scheduled"
	case DLQPending, DLQRecorded:
		return "being dead-lettered"
	case Succeeded:
		return "completed"
	}
	return string(s)
}

// Terminal reports whether nothing more happens to the job by itself.
func (s Status) Terminal() bool { return s == Succeeded || s == Failed }

// AllowedTransitions lists every legal (from, to) pair (for the database's
// own guard and for tests).
func AllowedTransitions() [][2]Status {
	var out [][2]Status
	for _, from := range Statuses {
		for _, to := range transitions[from] {
			out = append(out, [2]Status{from, to})
		}
	}
	return out
}
