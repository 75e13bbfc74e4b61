package graph

import (
	"context"
	"errors"
	"fmt"
	"reflect"
)

// Subgraph makes a node of a compiled graph over the same state type.
//
// The child runs in its own checkpoint namespace, "<node>:<task id>" under
// the parent's (levels joined by "|"), on the child's checkpointer or else
// the parent's. Its interrupts pause the parent; resuming the parent resumes
// the child where it stopped. Its events stream through the parent's with
// their namespace. Its output is written back as the channels it changed; an
// append channel gets only the items the child appended, so nothing is
// appended twice (LangGraph re-applies the whole output, #4007).
func Subgraph[S any](child *Graph[S]) NodeFunc[S] {
	return func(ctx context.Context, s S) (Command, error) {
		sc := scopeFrom(ctx)
		if sc == nil {
			return Command{}, errors.New("subgraph node called outside a run")
		}
		ns := joinNS(sc.ns, sc.task.Node+":"+sc.task.ID)
		cp := child.cfg.checkpointer
		if cp == nil {
			cp = sc.cp
		}
		var in Command
		fresh := true
		if cp != nil {
			t, err := cp.GetTuple(ctx, sc.thread, ns, "")
			switch {
			case err == nil:
				fresh = false
				rm := ResumeMap{}
				for _, it := range pendingInterrupts(t.Writes) {
					if v, ok := sc.resume[it.ID]; ok {
						rm[it.ID] = v
					}
				}
				if len(rm) > 0 {
					in.Resume = rm
				}
			case !errors.Is(err, ErrNotFound):
				return Command{}, fmt.Errorf("load subgraph %s: %w", ns, err)
			}
		}
		if fresh {
			in.Update = child.inputWrites(s)
		}
		var sink func(Event) bool
		if sc.modes != 0 {
			sink = func(ev Event) bool { sc.emitter.emit(ev); return true }
		}
		res, err := child.execute(ctx, Config{ThreadID: sc.thread, NS: ns, Durability: sc.durability}, in, sc.modes, sink, cp)
		if err != nil {
			return Command{}, err
		}
		if len(res.Interrupts) > 0 {
			return Command{}, &interruptSignal{interrupts: res.Interrupts}
		}
		return Command{Update: diffWrites(child.schema, s, res.State)}, nil
	}
}

// inputWrites writes every channel of s as an Overwrite.
func (g *Graph[S]) inputWrites(s S) []Write {
	v := reflect.ValueOf(s)
	ws := make([]Write, 0, len(g.schema.channels))
	for _, ch := range g.schema.channels {
		ws = append(ws, Write{Channel: ch.name, Value: Overwrite{Value: v.Field(ch.index).Interface()}})
	}
	return ws
}

// diffWrites is what a subgraph changed: appended items for append channels,
// the new value for the others.
func diffWrites[S any](sch *schema, before, after S) []Write {
	o, n := reflect.ValueOf(before), reflect.ValueOf(after)
	var ws []Write
	for _, ch := range sch.channels {
		ov, nv := o.Field(ch.index), n.Field(ch.index)
		if ch.kind == kindAppend {
			if nv.Len() >= ov.Len() && reflect.DeepEqual(ov.Interface(), nv.Slice(0, ov.Len()).Interface()) {
				if nv.Len() > ov.Len() {
					ws = append(ws, Write{Channel: ch.name, Value: nv.Slice(ov.Len(), nv.Len()).Interface()})
				}
				continue
			}
			ws = append(ws, Write{Channel: ch.name, Value: Overwrite{Value: nv.Interface()}})
			continue
		}
		if !reflect.DeepEqual(ov.Interface(), nv.Interface()) {
			ws = append(ws, Write{Channel: ch.name, Value: nv.Interface()})
		}
	}
	return ws
}
