package server

import (
	"context"
	"runtime"
	"sync"
	"time"
)

// A stream whose connection is taken over (sseConn) has no goroutine of its own: its work
// (events due, a heartbeat, a credential recheck, a held event's time, its end) is queued
// for a few writer goroutines shared by all such streams (sseWriters), which write each
// stream's frames (encoded once per event for all streams, see sseMessage.Frame) to its
// connection. So a broadcast to 10,000 clients wakes a few goroutines, not 10,000.
//
// A write that cannot go out within sseSlowWrite (the client takes nothing, its socket's
// buffer is full) fails, and that stream ends: its connection is closed, and the client
// reconnects and resumes from its Last-Event-ID, rather than holding up the writer and
// every stream queued behind it.
const sseSlowWrite = 5 * time.Second

// What a stream's work is (sseStream.work), as bits.
const (
	sseStart   = 1 << iota // the retry line and the replay
	sseReady               // the bus's stream may have events due, or has ended
	sseBeat                // the heartbeat
	sseRecheck             // the credential recheck
	sseDue                 // a held event's time has come (throttling)
	sseStop                // the server shuts down
)

// sseWriters is the queue of streams with work and its writer goroutines.
type sseWriters struct {
	mu    sync.Mutex
	cond  sync.Cond
	queue []*sseStream
	live  map[*sseStream]struct{}
	shut  bool
}

// writers returns the server's writers, started at the first taken-over stream.
func (s *Server) writers() *sseWriters {
	s.sseOnce.Do(func() {
		w := &sseWriters{live: map[*sseStream]struct{}{}}
		w.cond.L = &w.mu
		for range max(4, 2*runtime.GOMAXPROCS(0)) {
			go w.serve()
		}
		go func() {
			<-s.closing
			w.mu.Lock()
			w.shut = true
			live := make([]*sseStream, 0, len(w.live))
			for st := range w.live {
				live = append(live, st)
			}
			w.mu.Unlock()
			for _, st := range live {
				st.kick(sseStop)
			}
		}()
		s.sse = w
	})
	return s.sse
}

// add starts st on the writers: cancel ends its context, once its connection is closed.
func (w *sseWriters) add(ctx context.Context, st *sseStream, conn *sseConn, cancel context.CancelFunc) {
	st.w, st.ctx, st.cancel = w, ctx, cancel
	w.mu.Lock()
	shut := w.shut
	w.live[st] = struct{}{}
	w.mu.Unlock()
	st.beatT = time.AfterFunc(sseHeartbeat, func() { st.kick(sseBeat) })
	st.recheckT = time.AfterFunc(st.s.cfg.StreamRecheck, func() { st.kick(sseRecheck) })
	st.sub.OnReady(func() { st.kick(sseReady) })
	go conn.watch(cancel)
	if shut {
		st.kick(sseStart | sseStop)
		return
	}
	st.kick(sseStart)
}

// kick adds work to st's and queues it unless it is queued or being served already (then
// its writer serves it again).
func (st *sseStream) kick(work uint8) {
	st.mu.Lock()
	st.work |= work
	queue := !st.queued && !st.ended
	st.queued = st.queued || queue
	st.mu.Unlock()
	if queue {
		st.w.push(st)
	}
}

func (w *sseWriters) push(st *sseStream) {
	w.mu.Lock()
	w.queue = append(w.queue, st)
	w.mu.Unlock()
	w.cond.Signal()
}

// serve serves the queued streams, one at a time, each by one writer at a time.
func (w *sseWriters) serve() {
	for {
		w.mu.Lock()
		for len(w.queue) == 0 {
			w.cond.Wait()
		}
		st := w.queue[0]
		w.queue[0] = nil
		w.queue = w.queue[1:]
		if len(w.queue) == 0 && cap(w.queue) > 1024 {
			w.queue = nil
		}
		w.mu.Unlock()

		st.mu.Lock()
		work := st.work
		st.work = 0
		st.mu.Unlock()
		ended := st.serve(work)
		st.mu.Lock()
		st.ended = st.ended || ended
		again := st.work != 0 && !st.ended
		st.queued = again
		st.mu.Unlock()
		if again {
			w.push(st)
		}
		if ended {
			st.finish()
		}
	}
}

// serve does st's work, as run does on a goroutine of its own, and reports whether st ended.
func (st *sseStream) serve(work uint8) bool {
	ctx := st.ctx
	if work&sseStop != 0 || ctx.Err() != nil {
		return true
	}
	if work&sseStart != 0 {
		if st.write(true, sseRetry) != nil {
			return true
		}
		work |= sseReady // the replay
	}
	if work&sseReady != 0 && st.sub.Deliver(st.deliver) != nil { // ctx ended, the bus closed, or a write failed
		return true
	}
	if work&sseRecheck != 0 { // signed out, or the token revoked, since the stream began: it ends
		if !st.alive(ctx) {
			return true
		}
		st.recheckT.Reset(st.s.cfg.StreamRecheck)
	}
	if work&sseBeat != 0 {
		if st.write(true, sseKeepAlive) != nil {
			return true
		}
		st.beatT.Reset(sseHeartbeat)
	}
	if work&sseDue != 0 {
		ev := st.held
		st.sent, st.held = time.Now(), nil
		if ev != nil && st.send(ctx, *ev) != nil {
			return true
		}
	}
	return false
}

// finish releases an ended stream: its subscription, timers and connection.
func (st *sseStream) finish() {
	st.beatT.Stop()
	st.recheckT.Stop()
	st.sub.Close()
	st.cancel()
	st.out.(*sseConn).end()
	st.w.mu.Lock()
	delete(st.w.live, st)
	st.w.mu.Unlock()
}
