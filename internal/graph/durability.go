package graph

import (
	"bytes"
	"errors"
	"fmt"
)

// Durability says when a run saves its checkpoints: LangGraph's durability modes. It applies
// to the checkpoints of a run's steps and of its input; a resume or fork claim, UpdateState
// and pending writes are always saved before the run goes on.
type Durability string

const (
	// DurabilitySync (the default) saves each step's checkpoint before the next step starts:
	// a crash loses at most the step that was running.
	DurabilitySync Durability = "sync"
	// DurabilityAsync saves each step's checkpoint while the next step runs. At most one
	// checkpoint is in flight per run, and they are saved in order: a step's checkpoint is
	// sent only once the one before it is saved. A failed save fails the run at the next
	// step boundary (the step that ran meanwhile is dropped with it), and the run returns
	// only once its last checkpoint is saved. A crash loses at most the step that was running
	// and the checkpoint in flight: a resume continues from the last saved one.
	DurabilityAsync Durability = "async"
	// DurabilityExit saves a checkpoint only when the run pauses (an interrupt), fails (an
	// error) or ends: one checkpoint holding every change since the last saved one. Pending
	// writes of a step's finished tasks are not saved. A crash loses the whole run since its
	// last saved checkpoint (for a new thread, the thread).
	DurabilityExit Durability = "exit"
)

// WithDurability sets the graph's default durability (Config.Durability overrides it for one
// run).
func WithDurability(d Durability) CompileOption {
	return func(cc *compileConfig) { cc.durability = d }
}

// ErrDurability: an unknown durability mode.
var ErrDurability = errors.New("unknown durability mode")

func (d Durability) check() error {
	switch d {
	case "", DurabilitySync, DurabilityAsync, DurabilityExit:
		return nil
	}
	return fmt.Errorf("%w %q (want sync, async or exit)", ErrDurability, string(d))
}

// inFlight is a checkpoint being saved in the background (DurabilityAsync).
type inFlight struct {
	cp   Checkpoint
	done chan struct{}
	err  error // set before done is closed
}

// deferrable reports whether a checkpoint may be saved later than the step that made it:
// a step's or an input's checkpoint without pending writes, under async or exit.
func (r *run[S]) deferrable(cp Checkpoint, writes []PendingWrite) bool {
	return r.durability != DurabilitySync && r.durability != "" && len(writes) == 0 &&
		(cp.Source == SourceLoop || cp.Source == SourceInput)
}

// putLater saves cp in the background (async) or keeps it for the run's exit (exit).
func (r *run[S]) putLater(cp Checkpoint, blobs []Blob, expect string) error {
	if r.durability == DurabilityExit {
		r.keep(cp, blobs, expect)
		return nil
	}
	if err := r.settle(); err != nil {
		return err
	}
	f := &inFlight{cp: cp, done: make(chan struct{})}
	r.flight = f
	req := PutRequest{Checkpoint: cp, Blobs: blobs, ExpectHead: expect}
	go func() {
		defer close(f.done)
		if err := r.cp.Put(r.ctx, req); err != nil {
			f.err = fmt.Errorf("save checkpoint of thread %s: %w", r.thread, err)
		}
	}()
	return nil
}

// flightFailed reports, without waiting, the error of a background save that has failed.
func (r *run[S]) flightFailed() error {
	if r.flight == nil {
		return nil
	}
	select {
	case <-r.flight.done:
		return r.settle()
	default:
		return nil
	}
}

// settle makes the run's head durable: it waits for the checkpoint in flight (async) or saves
// the kept one (exit), and returns the save's error. Anything that writes against the head
// (pending writes, interrupts, a sync checkpoint) settles first.
func (r *run[S]) settle() error {
	if f := r.flight; f != nil {
		<-f.done
		r.flight = nil
		if f.err != nil {
			r.failed = f.err
			return f.err
		}
		r.committed(f.cp)
		return nil
	}
	if r.failed != nil {
		return r.failed
	}
	if r.kept != nil {
		return r.flush()
	}
	return nil
}

// keptRun is what an exit-durability run has not saved yet: every blob since its last saved
// checkpoint, one per channel, the delta chains' items joined.
type keptRun struct {
	expect string // the last saved head
	parent string
	blobs  []Blob
	index  map[string]int
}

// keep adds a step's checkpoint to what the run saves at its exit.
func (r *run[S]) keep(cp Checkpoint, blobs []Blob, expect string) {
	k := r.kept
	if k == nil {
		k = &keptRun{expect: expect, parent: cp.ParentID, index: map[string]int{}}
		r.kept = k
	}
	for _, b := range blobs {
		i, ok := k.index[b.Channel]
		if !ok {
			k.index[b.Channel] = len(k.blobs)
			k.blobs = append(k.blobs, b) // a delta keeps its base: the saved version
			continue
		}
		if b.Delta {
			prev := &k.blobs[i]
			prev.Data = joinArrays(prev.Data, b.Data)
			prev.Version = b.Version
			continue
		}
		k.blobs[i] = b
	}
}

// flush saves the kept checkpoint: the run's head, as one step from the last saved
// checkpoint, with every channel it changed at the head's own version.
func (r *run[S]) flush() error {
	k := r.kept
	cp := r.head
	cp.ParentID = k.parent
	versions := make(map[string]string, len(cp.Versions))
	for ch, v := range cp.Versions {
		versions[ch] = v
	}
	blobs := make([]Blob, len(k.blobs))
	for i, b := range k.blobs {
		b.Version = cp.ID
		versions[b.Channel] = cp.ID
		blobs[i] = b
	}
	cp.Versions = versions
	if err := r.cp.Put(r.ctx, PutRequest{Checkpoint: cp, Blobs: blobs, ExpectHead: k.expect}); err != nil {
		r.failed = fmt.Errorf("save checkpoint of thread %s: %w", r.thread, err)
		return r.failed
	}
	r.kept = nil
	r.head = cp
	r.committed(cp)
	return nil
}

// finish settles the run's last checkpoint when it stops; runErr is how it stopped. A save
// that fails is the run's error, or joins it.
func (r *run[S]) finish(runErr error) error {
	if r.cp == nil {
		return runErr
	}
	if err := r.settle(); err != nil {
		if runErr == nil {
			return err
		}
		return errors.Join(runErr, err)
	}
	return runErr
}

// joinArrays appends JSON array b's items to JSON array a's (null counts as empty).
func joinArrays(a, b []byte) []byte {
	ai, bi := arrayItems(a), arrayItems(b)
	out := make([]byte, 0, len(ai)+len(bi)+3)
	out = append(out, '[')
	out = append(out, ai...)
	if len(ai) > 0 && len(bi) > 0 {
		out = append(out, ',')
	}
	out = append(out, bi...)
	return append(out, ']')
}

func arrayItems(p []byte) []byte {
	p = bytes.TrimSpace(p)
	if len(p) < 2 || p[0] != '[' {
		return nil // null
	}
	return bytes.TrimSpace(p[1 : len(p)-1])
}
