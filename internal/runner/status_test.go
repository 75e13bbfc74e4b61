package runner_test

import (
	"errors"
	"testing"

	"weft/internal/fault"
	"weft/internal/runner"
)

// Every (from, to) pair: exactly the allowed ones pass, every other one is
// rejected with an IllegalTransitionError classified as business.
func TestEveryStatusTransition(t *testing.T) {
	t.Parallel()
	allowed := map[[2]runner.Status]bool{
		{runner.Queued, runner.Running}:         true,
		{runner.Running, runner.WaitingReview}:  true,
		{runner.WaitingReview, runner.Running}:  true,
		{runner.Running, runner.Succeeded}:      true,
		{runner.Running, runner.RetryScheduled}: true,
		{runner.RetryScheduled, runner.Running}: true,
		{runner.Running, runner.DLQPending}:     true,
		{runner.DLQPending, runner.DLQRecorded}: true,
		{runner.DLQRecorded, runner.Failed}:     true,
		{runner.Failed, runner.Queued}:          true,
		{runner.Running, runner.Queued}:         true,
	}
	all := append(runner.Statuses, "bogus")
	checked, rejected := 0, 0
	for _, from := range all {
		for _, to := range all {
			checked++
			err := runner.CheckTransition(from, to)
			if allowed[[2]runner.Status{from, to}] {
				if err != nil {
					t.Errorf("%s → %s rejected: %v", from, to, err)
				}
				continue
			}
			rejected++
			var ite *runner.IllegalTransitionError
			if !errors.As(err, &ite) {
				t.Errorf("%s → %s allowed, want rejected", from, to)
				continue
			}
			if class, code := fault.Classify(err); class != fault.Business || code != fault.CodeIllegalTransition {
				t.Errorf("%s → %s classified %s/%s", from, to, class, code)
			}
		}
	}
	if got := len(runner.AllowedTransitions()); got != len(allowed) {
		t.Errorf("AllowedTransitions lists %d pairs, want %d", got, len(allowed))
	}
	t.Logf("%d pairs checked, %d rejected (100%% of the illegal ones)", checked, rejected)
}
