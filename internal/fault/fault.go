// Package fault is Weft's error vocabulary: the five error classes of seed
// 000 §9 and the machine codes shown to programs and people. Codes are
// constants here and nowhere else. It imports the standard library and
// internal/graph (to recognise the engine's own error types).
package fault

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	"weft/internal/graph"
)

// Class is an error class (seed 000 §9).
type Class string

// The classes. Transient errors are retried (job retry_count < 3); the rest
// go to the dead-letter queue.
const (
	Validation Class = "validation"
	Business   Class = "business"
	Transient  Class = "transient"
	Permanent  Class = "permanent"
	Security   Class = "security"
)

// Classes lists every class.
var Classes = []Class{Validation, Business, Transient, Permanent, Security}

// Machine codes.
const (
	CodeInterruptResumeInvalid = "WF_INTERRUPT_RESUME_INVALID"
	CodeThreadConflict         = "WF_THREAD_CONFLICT"
	CodeIllegalTransition      = "WF_ILLEGAL_STATUS_TRANSITION"
	CodeJobSuperseded          = "WF_JOB_SUPERSEDED"
	CodeImmutableField         = "WF_IMMUTABLE_FIELD"
	CodeNodePanic              = "WF_NODE_PANIC"
	CodeRecursionLimit         = "WF_RECURSION_LIMIT"
	CodeInvalidUpdate          = "WF_INVALID_UPDATE"
	CodeLeaseLost              = "WF_LEASE_LOST"
	CodeTimeout                = "WF_TIMEOUT"
	CodeUnknown                = "WF_UNKNOWN"
	CodeNotFound               = "NOT_FOUND"
	CodeValidation             = "VALIDATION_FAILED"
	CodeForbidden              = "FORBIDDEN"
	CodeUnauthenticated        = "UNAUTHENTICATED"
	CodeCSRF                   = "CSRF_INVALID"
	CodeRateLimited            = "RATE_LIMITED"
	CodeLLMTransient           = "LLM_TRANSIENT"
	CodeLLMPermanent           = "LLM_PERMANENT"
	CodeLLMTimeout             = "LLM_TIMEOUT"
	CodeWorkflowUnknown        = "WF_UNKNOWN_WORKFLOW"
	// CodeConnectionLost: the connection to a backing service (the database)
	// dropped mid-operation. Transient, and not the job's fault: the runner
	// leaves the job to lease expiry and rescue instead of spending a retry.
	CodeConnectionLost = "WF_CONNECTION_LOST"
	// CodeWorkerLost: the job was rescued after an expired lease so many
	// times (runner.Config.MaxRescues) that the runner gave up on it.
	CodeWorkerLost = "WF_WORKER_LOST"
	// CodeReviewExpired: a pause was not answered before its resume tokens expired
	// (runner.Config.TokenTTL); the runner dead-letters the job, and an admin's retry asks
	// for the review again.
	CodeReviewExpired = "WF_REVIEW_EXPIRED"
)

// Machine codes of account management (users, tenants, passwords).
const (
	CodeLastAdmin    = "LAST_ADMIN"            // the change would leave a tenant without an active admin
	CodeEmailTaken   = "EMAIL_TAKEN"           // a user with that email exists (in any tenant)
	CodeTenantTaken  = "TENANT_TAKEN"          // a tenant with that slug exists
	CodeWeakPassword = "WEAK_PASSWORD"         // the password rules refused it
	CodeLinkInvalid  = "PASSWORD_LINK_INVALID" // a password link unknown, used, replaced or expired
	CodeDeactivated  = "ACCOUNT_DEACTIVATED"   // the account is deactivated
)

// Error is a classified error with a machine code and a message that is
// safe to show.
type Error struct {
	Class   Class
	Code    string
	Message string
	Err     error
}

// Detail is an error's message for a page that shows its code and class beside it: without
// the "CODE (class): " that Error puts in front (also after a "node x: " prefix).
func Detail(code string, class Class, msg string) string {
	p := fmt.Sprintf("%s (%s): ", code, class)
	if i := strings.Index(msg, p); i == 0 || (i > 0 && strings.HasSuffix(msg[:i], ": ")) {
		return msg[:i] + msg[i+len(p):]
	}
	return msg
}

func (e *Error) Error() string {
	if e.Err != nil && e.Message == "" {
		return fmt.Sprintf("%s (%s): %v", e.Code, e.Class, e.Err)
	}
	if e.Err != nil {
		return fmt.Sprintf("%s (%s): %s: %v", e.Code, e.Class, e.Message, e.Err)
	}
	return fmt.Sprintf("%s (%s): %s", e.Code, e.Class, e.Message)
}

func (e *Error) Unwrap() error { return e.Err }

// New returns a classified error.
func New(class Class, code, message string) *Error {
	return &Error{Class: class, Code: code, Message: message}
}

// Wrap classifies err.
func Wrap(class Class, code string, err error) *Error {
	return &Error{Class: class, Code: code, Err: err}
}

// Classify finds the class and code of any error: an *Error anywhere in the
// chain wins; the engine's own error types map to fixed classes; everything
// else is transient (an unknown failure is worth a bounded retry).
func Classify(err error) (Class, string) {
	var fe *Error
	var pe *graph.PanicError
	var rl *graph.RecursionLimitError
	var iu *graph.InvalidUpdateError
	var ce *graph.CompileError
	switch {
	case err == nil:
		return "", ""
	case errors.As(err, &fe):
		return fe.Class, fe.Code
	case errors.Is(err, graph.ErrResumeInvalid):
		return Validation, CodeInterruptResumeInvalid
	case errors.Is(err, graph.ErrConflict):
		return Transient, CodeThreadConflict
	case errors.As(err, &pe):
		return Permanent, CodeNodePanic
	case errors.As(err, &rl):
		return Permanent, CodeRecursionLimit
	case errors.As(err, &iu):
		return Permanent, CodeInvalidUpdate
	case errors.As(err, &ce):
		return Permanent, CodeUnknown
	case errors.Is(err, context.DeadlineExceeded):
		return Transient, CodeTimeout
	case connectionLost(err):
		return Transient, CodeConnectionLost
	case graph.IsPermanent(err):
		return Permanent, CodeUnknown
	}
	return Transient, CodeUnknown
}

// connectionLost recognises a dropped or refused network connection.
func connectionLost(err error) bool {
	var ne net.Error
	var oe *net.OpError
	return errors.As(err, &oe) || errors.As(err, &ne) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, net.ErrClosed)
}

// Retryable reports whether the class is worth retrying.
func (c Class) Retryable() bool { return c == Transient }
