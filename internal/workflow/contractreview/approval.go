package contractreview

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"weft/internal/fault"
	"weft/internal/graph"
)

// Verdicts of a decision on one diff.
const (
	Approve = "approve"
	Reject  = "reject"
)

// Sentinels of refused decisions (wrapped in a fault.Validation error).
var (
	// ErrNotPaused: the thread is not waiting for a decision on the clause named.
	ErrNotPaused = errors.New("the review is not waiting for a decision on this clause")
	// ErrUnknownDiff: a decision names a diff that is not pending.
	ErrUnknownDiff = errors.New("no pending diff with this id")
	// ErrBadDecision: a verdict other than approve/reject, or a diff left undecided.
	ErrBadDecision = errors.New("invalid decision")
)

// Decision is a reviewer's verdict on one diff. Feedback on a rejection
// asks for a re-proposal.
type Decision struct {
	Verdict  string `json:"verdict"`
	Feedback string `json:"feedback,omitempty"`
}

// Decisions is a reviewer's answer for the paused clause.
type Decisions struct {
	// ClauseID, when set, must be the paused clause (a stale form fails).
	ClauseID string `json:"clause_id,omitempty"`
	// Items are keyed by diff id. Every pending diff needs one, unless ApproveAll.
	Items map[string]Decision `json:"items"`
	// ApproveAll approves every pending diff that Items does not decide.
	ApproveAll bool `json:"approve_all,omitempty"`
	// Reviewer and At become the tracked changes' author and date.
	Reviewer string    `json:"reviewer"`
	At       time.Time `json:"at"`
}

// Paused reports whether the thread waits before human_approval for
// decisions, and on which clause. Once decisions are injected (update_state)
// the thread is no longer paused, so a second answer to the same pause is
// refused; continuing the thread runs human_approval.
func Paused(snap graph.Snapshot[ReviewGraphState]) (clauseID string, ok bool) {
	for _, it := range snap.Interrupts {
		if it.Node == NodeHumanApproval && it.When == graph.InterruptBefore {
			return snap.Values.CurrentClauseID, len(snap.Values.PendingDiffs) > 0
		}
	}
	return "", false
}

// PendingDiffs are the diffs of the paused clause waiting for a decision
// (after a rejection with feedback: only the re-proposals).
func PendingDiffs(s ReviewGraphState) []DocumentDiff {
	return slices.Clone(s.PendingDiffs)
}

// DecisionWrites checks a reviewer's decisions against the paused thread and
// turns them into the update_state writes of seed §7 (user_decisions,
// user_feedback, decided_by, decided_at). Apply them as clause_validate
// (UpdateState's default: the node that wrote the head), then continue the
// thread with the zero Command.
func DecisionWrites(snap graph.Snapshot[ReviewGraphState], d Decisions) ([]graph.Write, error) {
	clause, ok := Paused(snap)
	if !ok || d.ClauseID != "" && d.ClauseID != clause {
		return nil, refused(ErrNotPaused, fmt.Sprintf("clause %q is not waiting for a decision", cmpOr(d.ClauseID, clause)))
	}
	pending := map[string]bool{}
	for _, p := range snap.Values.PendingDiffs {
		pending[p.DiffID] = true
	}
	for _, id := range slices.Sorted(maps.Keys(d.Items)) {
		if !pending[id] {
			return nil, refused(ErrUnknownDiff, fmt.Sprintf("diff %q is not pending on clause %s", id, clause))
		}
		if v := d.Items[id].Verdict; v != Approve && v != Reject {
			return nil, refused(ErrBadDecision, fmt.Sprintf("diff %q: verdict %q is not approve or reject", id, v))
		}
	}
	decisions, feedback := map[string]string{}, map[string]string{}
	for _, p := range snap.Values.PendingDiffs {
		it, ok := d.Items[p.DiffID]
		switch {
		case ok:
			decisions[p.DiffID] = it.Verdict
			if fb := strings.TrimSpace(it.Feedback); fb != "" {
				feedback[p.DiffID] = fb
			}
		case d.ApproveAll:
			decisions[p.DiffID] = Approve
		default:
			return nil, refused(ErrBadDecision, fmt.Sprintf("diff %q has no decision", p.DiffID))
		}
	}
	if strings.TrimSpace(d.Reviewer) == "" {
		return nil, refused(ErrBadDecision, "the reviewer is not named")
	}
	return []graph.Write{keyUserDecisions.Set(decisions), keyUserFeedback.Set(feedback),
		keyDecidedBy.Set(strings.TrimSpace(d.Reviewer)), keyDecidedAt.Set(d.At.UTC())}, nil
}

// ApplyDecisions records a reviewer's decisions on a paused thread (checked
// by DecisionWrites, written with update_state). Continue the thread with
// g.Invoke(ctx, cfg, graph.Command{}) afterwards.
func ApplyDecisions(ctx context.Context, g *graph.Graph[ReviewGraphState], cfg graph.Config, d Decisions) (graph.Checkpoint, error) {
	snap, err := g.GetState(ctx, cfg)
	if err != nil {
		return graph.Checkpoint{}, err
	}
	ws, err := DecisionWrites(snap, d)
	if err != nil {
		return graph.Checkpoint{}, err
	}
	return g.UpdateState(ctx, cfg, ws, NodeClauseValidate)
}

func refused(kind error, msg string) error {
	return fault.Wrap(fault.Validation, fault.CodeValidation, fmt.Errorf("%w: %s", kind, msg))
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// humanApproval is the seed's node_human_approval. It runs after the pause,
// once update_state has injected the decisions: each pending diff becomes
// approved or rejected (no decision means approve, as in the seed), stamped
// with the reviewer and the time.
func (r *reviewer) humanApproval(_ context.Context, s ReviewGraphState) (graph.Command, error) {
	if len(s.PendingDiffs) == 0 {
		return graph.Update(keyPendingDiffs.Set([]DocumentDiff{}), keyUserDecisions.Set(map[string]string{})), nil
	}
	pending := map[string]bool{}
	for _, p := range s.PendingDiffs {
		pending[p.DiffID] = true
	}
	by, at := s.DecidedBy, s.DecidedAt
	if by == "" {
		by = "reviewer"
	}
	if at.IsZero() {
		at = r.now().UTC()
	}
	diffs := slices.Clone(s.CurrentDiffs)
	for i, d := range diffs {
		if !pending[d.DiffID] || d.Status != StatusProposed {
			continue
		}
		d.Status, d.DecidedBy, d.DecidedAt = StatusApproved, by, at
		if s.UserDecisions[d.DiffID] == Reject {
			d.Status = StatusRejected
			if fb := s.UserFeedback[d.DiffID]; fb != "" {
				d.Feedback = fb
			}
		}
		diffs[i] = d
	}
	return graph.Update(keyCurrentDiffs.Set(diffs), keyPendingDiffs.Set([]DocumentDiff{})), nil
}
