package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"weft/internal/postgres"
)

// sseMessage is one server-sent event: its name is what htmx's sse-swap
// listens for; its data is HTML rendered by the same templ component the
// full page uses.
type sseMessage struct {
	Event string
	HTML  templ.Component
	Data  string // used when HTML is nil (e.g. JSON for the API stream)
	// Frame, when set, is the whole message already encoded (id, event and
	// data lines; see appendSSE), shared by every stream that sends it: it is
	// written as it is and the other fields are unused.
	Frame []byte
}

// sseHeartbeat keeps idle connections (and proxies) alive.
const sseHeartbeat = 15 * time.Second

var (
	sseRetry     = []byte("retry: 2000\n\n")
	sseKeepAlive = []byte(": keep-alive\n\n")
)

// lastEventID is where a reconnecting client left off: the Last-Event-ID
// header the browser sends, or ?last_event_id= for a first connection that
// already rendered up to an event.
// Anything but an event id (a whole number, 0 for the start) is a 400: replaying from the
// start instead would hand a client that sent a mangled id what it has seen already.
func lastEventID(c echo.Context) (int64, error) {
	v, name := c.Request().Header.Get("Last-Event-ID"), "Last-Event-ID"
	if v == "" {
		v, name = c.QueryParam("last_event_id"), "last_event_id"
	}
	if v == "" {
		return 0, nil
	}
	id, err := strconv.ParseInt(v, 10, 64)
	if err != nil || id < 0 {
		return 0, badRequest(fmt.Sprintf("%s %q is not an event id: send the id of the last event received (a whole number), or none to start from the beginning", name, v))
	}
	return id, nil
}

// stream answers with an SSE stream of a tenant's events (one thread, or
// all when thread is ""), replayed from the client's last event id and then
// live from the event bus, so a page served by one process follows a thread
// run by another. toMessages turns each stored event into the messages to
// send (none to skip it); ids are the events' ids, so a reconnect resumes
// exactly after the last one delivered.
//
// Everything is done by the handler's goroutine: it waits for the bus's
// stream to be ready (postgres.Stream, which has no goroutine of its own),
// then converts and writes the events due, and in between sends the
// heartbeats. So an idle stream costs the connection's goroutines and a few
// small objects, and an event is written by the one goroutine woken for it.
// The connection's write deadline, moved on by every heartbeat (not every
// event: that costs), is always between sseWriteTimeout and sseWriteTimeout
// + sseHeartbeat away: a client that takes nothing is dropped (it reconnects
// and resumes) rather than holding the subscription, which the bus's Close
// waits for.
//
// With throttle > 0, events that arrive within throttle of the last one sent are held, not
// dropped: the newest of them is sent once throttle has passed (a page that re-renders a
// whole region per event shows the final state of a burst, not the first).
func (s *Server) stream(c echo.Context, tenant, thread string, throttle time.Duration,
	toMessages func(ctx context.Context, ev postgres.StoredEvent) ([]sseMessage, error)) error {
	after, err := lastEventID(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	alive := s.credentialCheck(c)
	w := c.Response()
	rc := http.NewResponseController(w)
	var buf []byte // the stream's encoding buffer, reused from event to event
	// write sends what fill writes, flushed; beat moves the deadline on.
	write := func(beat bool, fill func() error) error {
		if beat {
			_ = rc.SetWriteDeadline(time.Now().Add(sseHeartbeat + sseWriteTimeout))
		}
		if err := fill(); err != nil {
			return err
		}
		return rc.Flush()
	}
	send := func(ev postgres.StoredEvent) error {
		msgs, err := toMessages(ctx, ev)
		if err != nil {
			s.log.Warn("render live update", "err", err, "thread_id", ev.Thread)
			return nil
		}
		if len(msgs) == 0 {
			return nil
		}
		return write(false, func() (err error) {
			buf, err = writeSSE(ctx, w, buf[:0], ev.ID, msgs)
			if cap(buf) > sseKeepBuffer {
				buf = nil // a big render's buffer is not kept by an idle stream
			}
			return err
		})
	}
	// Throttling: sent is when the last event went out; held is the newest event since, when
	// it came too soon; due (set by a timer) says a held event's time has come.
	var (
		sent time.Time
		held *postgres.StoredEvent
		due  chan struct{}
	)
	deliver := func(_ context.Context, ev postgres.StoredEvent) error {
		if throttle > 0 {
			if wait := throttle - time.Since(sent); wait > 0 {
				if held == nil {
					if due == nil {
						due = make(chan struct{}, 1)
					}
					time.AfterFunc(wait, func() {
						select {
						case due <- struct{}{}:
						default:
						}
					})
				}
				held = &ev
				return nil
			}
			sent, held = time.Now(), nil
		}
		return send(ev)
	}
	sub, err := s.app.Events.OpenStream(ctx, tenant, thread, after)
	if err != nil {
		return err
	}
	defer func() {
		sub.Close() // no delivery once the handler returns
		_ = rc.SetWriteDeadline(time.Time{})
	}()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if write(true, func() error { _, err := w.Write(sseRetry); return err }) != nil {
		return nil
	}
	if sub.Deliver(deliver) != nil { // the replay
		return nil
	}
	beat := time.NewTicker(sseHeartbeat)
	defer beat.Stop()
	recheck := time.NewTicker(s.cfg.StreamRecheck)
	defer recheck.Stop()
	for {
		select {
		case <-sub.Ready():
			if sub.Deliver(deliver) != nil { // ctx ended, the bus closed, or a write failed
				return nil
			}
		case <-recheck.C: // signed out, or the token revoked, since the stream began: it ends
			if !alive(ctx) {
				return nil
			}
		case <-sub.Done(): // ctx ended or the bus closed
			return nil
		case <-s.closing: // the server shuts down: the client reconnects (and resumes)
			return nil
		case <-beat.C:
			if write(true, func() error { _, err := w.Write(sseKeepAlive); return err }) != nil {
				return nil
			}
		case <-due: // nil (never ready) unless throttling
			ev := held
			sent, held = time.Now(), nil
			if ev != nil && send(*ev) != nil {
				return nil
			}
		}
	}
}

// credentialCheck returns the check a stream makes now and then that what let it in still
// stands: its API token (not revoked) or its session (not logged out or expired). Streams
// sharing a credential share its answers for a while (liveCache), so a thousand streams of
// one session cost one query per period, not a thousand.
func (s *Server) credentialCheck(c echo.Context) func(context.Context) bool {
	// What admitted the request: the API's routes take tokens only, the console's sessions only
	// (a console request carrying a Bearer header was admitted by its session).
	if secret, ok := bearer(c.Request()); ok && strings.HasPrefix(c.Path(), "/api/") {
		sum := sha256.Sum256([]byte(secret))
		return func(ctx context.Context) bool {
			return s.live.get("t:"+hex.EncodeToString(sum[:]), s.cfg.StreamRecheck/2, func() (bool, error) { return s.auth.APITokenLive(ctx, secret) })
		}
	}
	token := s.auth.Sessions.Token(c.Request().Context())
	return func(ctx context.Context) bool {
		return s.live.get("s:"+token, s.cfg.StreamRecheck/2, func() (bool, error) { return s.auth.SessionLive(ctx, token) })
	}
}

// liveCache holds the answers of credential checks for a short while.
type liveCache struct {
	mu sync.Mutex
	m  map[string]liveAnswer
}

type liveAnswer struct {
	live bool
	at   time.Time
}

// liveCacheMax bounds the answers kept (past it, they are all dropped and asked again).
const liveCacheMax = 10_000

// get returns key's answer if one is younger than ttl, else asks check. A check that fails
// (the database is away) keeps the stream: it is asked again next time.
func (l *liveCache) get(key string, ttl time.Duration, check func() (bool, error)) bool {
	l.mu.Lock()
	a, ok := l.m[key]
	l.mu.Unlock()
	if ok && time.Since(a.at) < ttl {
		return a.live
	}
	live, err := check()
	if err != nil {
		return true
	}
	l.mu.Lock()
	if l.m == nil || len(l.m) >= liveCacheMax {
		l.m = map[string]liveAnswer{}
	}
	l.m[key] = liveAnswer{live: live, at: time.Now()}
	l.mu.Unlock()
	return live
}

// sseWriteTimeout is the least time a stream's write is given (see stream).
const sseWriteTimeout = 15 * time.Second

// sseKeepBuffer is the largest encoding buffer a stream keeps between events.
const sseKeepBuffer = 64 << 10

// writeSSE writes messages under one event id with one Write: a single
// shared Frame as it is, otherwise the messages encoded into buf (returned
// for reuse).
func writeSSE(ctx context.Context, w io.Writer, buf []byte, id int64, msgs []sseMessage) ([]byte, error) {
	if len(msgs) == 1 && msgs[0].Frame != nil {
		_, err := w.Write(msgs[0].Frame)
		return buf, err
	}
	for _, m := range msgs {
		if m.Frame != nil {
			buf = append(buf, m.Frame...)
			continue
		}
		if m.HTML == nil {
			buf = appendSSE(buf, id, m.Event, m.Data)
			continue
		}
		var html bytes.Buffer
		if err := m.HTML.Render(ctx, &html); err != nil {
			return buf, err
		}
		buf = appendSSE(buf, id, m.Event, html.Bytes())
	}
	_, err := w.Write(buf)
	return buf, err
}

// appendSSE appends to dst one server-sent event: its id, its name and its
// data, one "data:" line per line of data.
func appendSSE[T string | []byte](dst []byte, id int64, event string, data T) []byte {
	dst = append(dst, "id: "...)
	dst = strconv.AppendInt(dst, id, 10)
	dst = append(dst, "\nevent: "...)
	dst = append(dst, event...)
	dst = append(dst, '\n')
	for {
		line, rest, more := cut(data)
		dst = append(dst, "data: "...)
		dst = append(dst, line...)
		dst = append(dst, '\n')
		if !more {
			break
		}
		data = rest
	}
	return append(dst, '\n')
}

// cut splits s around its first newline.
func cut[T string | []byte](s T) (before, after T, found bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			return s[:i], s[i+1:], true
		}
	}
	return s, s[len(s):], false
}
