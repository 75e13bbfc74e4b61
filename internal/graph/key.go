package graph

import (
	"context"
	"fmt"
	"reflect"
)

// Key is a typed channel name of a state type: Set takes only a value of the
// channel's type, and KeyOf checks the name and the type against the state
// when the key is made, so a misspelt channel fails as the program (or its
// tests) starts, not in the middle of a run.
type Key[T any] struct{ name string }

// KeyOf names channel name of state type S, whose values are of type T (for an
// append channel, T is the slice type). It panics when S has no such channel
// or the channel's type is not T: keys are package-level variables, so the
// mistake shows the moment the package is loaded.
func KeyOf[S, T any](name string) Key[T] {
	sch, problems := newSchema(reflect.TypeFor[S]())
	if len(problems) > 0 {
		panic(fmt.Sprintf("graph.KeyOf[%v](%q): %v", reflect.TypeFor[S](), name, problems))
	}
	ch, ok := sch.byName[name]
	if !ok {
		panic(fmt.Sprintf("graph.KeyOf[%v](%q): the state has no channel %q", reflect.TypeFor[S](), name, name))
	}
	if want := reflect.TypeFor[T](); ch.typ != want {
		panic(fmt.Sprintf("graph.KeyOf[%v](%q): the channel holds %v, not %v", reflect.TypeFor[S](), name, ch.typ, want))
	}
	return Key[T]{name: name}
}

// Name is the channel's name.
func (k Key[T]) Name() string { return k.name }

// Set is a write of v to the channel (appended, for an append channel).
func (k Key[T]) Set(v T) Write { return Write{Channel: k.name, Value: v} }

// Overwrite is a write that replaces an append or merge channel's value with v.
func (k Key[T]) Overwrite(v T) Write { return Write{Channel: k.name, Value: Overwrite{Value: v}} }

// TaskInfo is what a running node may know about itself.
type TaskInfo struct {
	ThreadID string
	NS       string
	Node     string
	TaskID   string
	Step     int
}

// CurrentTask returns the running node's task; ok is false outside a node.
func CurrentTask(ctx context.Context) (TaskInfo, bool) {
	sc := scopeFrom(ctx)
	if sc == nil {
		return TaskInfo{}, false
	}
	return TaskInfo{ThreadID: sc.thread, NS: sc.ns, Node: sc.task.Node, TaskID: sc.task.ID, Step: sc.step}, true
}

// ItemsKey is a typed append channel: Append takes items of its element type.
type ItemsKey[E any] struct{ name string }

// ItemsKeyOf names append channel name of state type S, whose items are of type E (the
// channel holds []E). It panics, as KeyOf does, when S has no such channel.
func ItemsKeyOf[S, E any](name string) ItemsKey[E] {
	return ItemsKey[E]{name: KeyOf[S, []E](name).name}
}

// Name is the channel's name.
func (k ItemsKey[E]) Name() string { return k.name }

// Append is a write appending items to the channel.
func (k ItemsKey[E]) Append(items ...E) Write { return Write{Channel: k.name, Value: items} }
