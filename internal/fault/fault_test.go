package fault_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"

	"weft/internal/fault"
	"weft/internal/graph"
)

func TestClassify(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		err   error
		class fault.Class
		code  string
	}{
		{"classified error wins through wrapping", fmt.Errorf("score: %w", &graph.NodeError{Node: "score_with_llm", Err: fault.New(fault.Business, "RULE_PACK_EMPTY", "no criteria")}), fault.Business, "RULE_PACK_EMPTY"},
		{"panic in a node", &graph.NodeError{Node: "x", Err: &graph.PanicError{Value: "boom"}}, fault.Permanent, fault.CodeNodePanic},
		{"recursion limit", &graph.RecursionLimitError{Limit: 25}, fault.Permanent, fault.CodeRecursionLimit},
		{"invalid update", &graph.InvalidUpdateError{Channel: "a"}, fault.Permanent, fault.CodeInvalidUpdate},
		{"resume invalid", fmt.Errorf("resume: %w", graph.ErrResumeInvalid), fault.Validation, fault.CodeInterruptResumeInvalid},
		{"thread conflict", graph.ErrConflict, fault.Transient, fault.CodeThreadConflict},
		{"timeout", context.DeadlineExceeded, fault.Transient, fault.CodeTimeout},
		{"marked permanent", graph.Permanent(errors.New("bad")), fault.Permanent, fault.CodeUnknown},
		{"unknown is transient", errors.New("connection reset"), fault.Transient, fault.CodeUnknown},
		{"dropped connection", fmt.Errorf("save checkpoint: %w", &net.OpError{Op: "read", Err: syscall.ECONNRESET}), fault.Transient, fault.CodeConnectionLost},
		{"server closed the connection", fmt.Errorf("claim: %w", io.ErrUnexpectedEOF), fault.Transient, fault.CodeConnectionLost},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			class, code := fault.Classify(tc.err)
			if class != tc.class || code != tc.code {
				t.Fatalf("Classify = %s/%s, want %s/%s", class, code, tc.class, tc.code)
			}
		})
	}
	if !fault.Transient.Retryable() || fault.Permanent.Retryable() || fault.Security.Retryable() {
		t.Fatal("only transient errors are retryable")
	}
}
