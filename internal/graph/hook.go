package graph

import "context"

// TaskAttempt is what a task hook is told before each attempt of a task the run executes.
type TaskAttempt struct {
	Node    string
	TaskID  string
	Step    int
	Attempt int   // 1 for the first
	PrevErr error // why the previous attempt failed (nil on the first)
}

// TaskHook is called before each attempt of each task a run executes (not a cached or
// replayed one), in the task's goroutine; the node runs with the context it returns. A
// tracer starts a span for the task there (its result arrives as the task_result event).
type TaskHook func(ctx context.Context, a TaskAttempt) context.Context

type taskHookKey struct{}

// WithTaskHook returns ctx carrying hook: runs (and their subgraphs) started with it call it.
func WithTaskHook(ctx context.Context, hook TaskHook) context.Context {
	return context.WithValue(ctx, taskHookKey{}, hook)
}

func taskHookFrom(ctx context.Context) TaskHook {
	h, _ := ctx.Value(taskHookKey{}).(TaskHook)
	return h
}
