package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
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
// On HTTP/1.x the stream takes its connection over from net/http once the
// subscription is open (sseConn): the response is written in chunks straight
// to the connection, and the stream is served by the server's few writer
// goroutines (sseWriters) while the handler's returns. So an idle stream costs
// no net/http buffers (10 KB) and no goroutine but the one that notices the
// client leaving, and a broadcast wakes a few writers, not a goroutine per
// client. Elsewhere (HTTP/2, a recorder) it runs on the handler's goroutine
// through the ResponseWriter. Either way it is told when the bus's stream is
// ready (postgres.Stream, which has no goroutine of its own), then converts
// and writes the events due, and in between sends the heartbeats.
//
// On the ResponseWriter, the write deadline, moved on by every heartbeat (not
// every event: that costs), is always between sseWriteTimeout and
// sseWriteTimeout + sseHeartbeat away; on a taken-over connection every write
// gets sseSlowWrite. A client that takes nothing is dropped (it reconnects and
// resumes) rather than holding the subscription, which the bus's Close waits
// for, or a writer.
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
	req := c.Request()
	// The stream's context has the request's values; it ends with the request, or, once the
	// connection is taken over, when the client leaves.
	ctx, cancel := context.WithCancel(context.WithoutCancel(req.Context()))
	unlink := context.AfterFunc(req.Context(), cancel)
	st := &sseStream{s: s, alive: s.credentialCheck(c), throttle: throttle, toMessages: toMessages}
	st.sub, err = s.app.Events.OpenStream(ctx, tenant, thread, after)
	if err != nil {
		unlink()
		cancel()
		return err
	}
	w := c.Response()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	h.Set("X-Accel-Buffering", "no")
	if conn := takeOver(w, req); conn != nil {
		unlink() // the request ends now; the stream goes on
		conn.slow = true
		st.out = conn
		s.writers().add(ctx, st, conn, cancel)
		return nil
	}
	defer func() {
		unlink()
		cancel()
	}()
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	st.out = responseOut{w, rc}
	st.run(ctx)
	_ = rc.SetWriteDeadline(time.Time{})
	return nil
}

// sseOut is where a stream writes: the ResponseWriter, or its connection taken over.
type sseOut interface {
	io.Writer
	Flush() error
	SetWriteDeadline(time.Time) error
}

// responseOut writes through the ResponseWriter.
type responseOut struct {
	io.Writer
	*http.ResponseController
}

// sseStream is one stream's state (see stream).
type sseStream struct {
	s          *Server
	sub        *postgres.Stream
	out        sseOut
	alive      func(context.Context) bool
	throttle   time.Duration
	toMessages func(ctx context.Context, ev postgres.StoredEvent) ([]sseMessage, error)
	buf        []byte // the encoding buffer, reused from event to event
	// Throttling: sent is when the last event went out; held is the newest event since, when
	// it came too soon; due (set by a timer) says a held event's time has come.
	sent time.Time
	held *postgres.StoredEvent
	due  chan struct{}

	// On a taken-over connection, the stream is served by the writers (see sseWriters).
	w               *sseWriters
	ctx             context.Context
	cancel          context.CancelFunc
	beatT, recheckT *time.Timer
	mu              sync.Mutex
	work            uint8 // what is to do (sseStart…)
	queued, ended   bool
}

// run sends the stream until it ends (the client left, the bus or the server closed, the
// credential lapsed or a write failed), and closes the subscription.
func (st *sseStream) run(ctx context.Context) {
	defer st.sub.Close() // no delivery once run returns
	if st.write(true, sseRetry) != nil {
		return
	}
	if st.sub.Deliver(st.deliver) != nil { // the replay
		return
	}
	beat := time.NewTicker(sseHeartbeat)
	defer beat.Stop()
	recheck := time.NewTicker(st.s.cfg.StreamRecheck)
	defer recheck.Stop()
	for {
		select {
		case <-st.sub.Ready():
			if st.sub.Deliver(st.deliver) != nil { // ctx ended, the bus closed, or a write failed
				return
			}
		case <-recheck.C: // signed out, or the token revoked, since the stream began: it ends
			if !st.alive(ctx) {
				return
			}
		case <-st.sub.Done(): // ctx ended or the bus closed
			return
		case <-st.s.closing: // the server shuts down: the client reconnects (and resumes)
			return
		case <-beat.C:
			if st.write(true, sseKeepAlive) != nil {
				return
			}
		case <-st.due: // nil (never ready) unless throttling
			ev := st.held
			st.sent, st.held = time.Now(), nil
			if ev != nil && st.send(ctx, *ev) != nil {
				return
			}
		}
	}
}

// write sends b, flushed; beat moves the deadline on.
func (st *sseStream) write(beat bool, b []byte) error {
	if beat {
		_ = st.out.SetWriteDeadline(time.Now().Add(sseHeartbeat + sseWriteTimeout))
	}
	if _, err := st.out.Write(b); err != nil {
		return err
	}
	return st.out.Flush()
}

// deliver is the bus stream's delivery: it sends ev, or holds it when throttling.
func (st *sseStream) deliver(ctx context.Context, ev postgres.StoredEvent) error {
	if st.throttle > 0 {
		if wait := st.throttle - time.Since(st.sent); wait > 0 {
			if st.held == nil && st.w != nil {
				time.AfterFunc(wait, func() { st.kick(sseDue) })
			} else if st.held == nil {
				if st.due == nil {
					st.due = make(chan struct{}, 1)
				}
				due := st.due
				time.AfterFunc(wait, func() {
					select {
					case due <- struct{}{}:
					default:
					}
				})
			}
			st.held = &ev
			return nil
		}
		st.sent, st.held = time.Now(), nil
	}
	return st.send(ctx, ev)
}

// send converts ev and writes its messages.
func (st *sseStream) send(ctx context.Context, ev postgres.StoredEvent) error {
	msgs, err := st.toMessages(ctx, ev)
	if err != nil {
		st.s.log.Warn("render live update", "err", err, "thread_id", ev.Thread)
		return nil
	}
	if len(msgs) == 0 {
		return nil
	}
	st.buf, err = writeSSE(ctx, st.out, st.buf[:0], ev.ID, msgs)
	if cap(st.buf) > sseKeepBuffer {
		st.buf = nil // a big render's buffer is not kept by an idle stream
	}
	if err != nil {
		return err
	}
	return st.out.Flush()
}

// sseConn is a stream's HTTP/1.x connection taken over from net/http: the response's body
// is written to it in chunks, each Write one chunk in one system call, with no buffer.
type sseConn struct {
	conn net.Conn
	size [20]byte // a chunk's size line
	slow bool     // each write gets sseSlowWrite (see sseWriters)
}

// takeOver takes w's connection over and writes the response's head (w's header, the body
// chunked), or returns nil where it cannot (not HTTP/1.x, or w cannot be hijacked).
func takeOver(w *echo.Response, req *http.Request) *sseConn {
	if req.ProtoMajor != 1 || req.ProtoMinor < 1 {
		return nil
	}
	conn, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return nil
	}
	h := w.Header()
	if h.Get("Date") == "" {
		h.Set("Date", time.Now().UTC().Format(http.TimeFormat))
	}
	h.Set("Transfer-Encoding", "chunked")
	var head bytes.Buffer
	head.WriteString("HTTP/1.1 200 OK\r\n")
	_ = h.Write(&head)
	head.WriteString("\r\n")
	w.Status, w.Committed = http.StatusOK, true
	_ = brw // what the client sent after its request (nothing, normally) is not read
	_ = conn.SetWriteDeadline(time.Now().Add(sseWriteTimeout))
	if _, err := conn.Write(head.Bytes()); err != nil {
		conn.Close()
		return &sseConn{conn: conn} // its writes fail: the stream ends at once
	}
	return &sseConn{conn: conn}
}

var sseCRLF = []byte("\r\n")

// Write writes p as one chunk.
func (o *sseConn) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	size := strconv.AppendInt(o.size[:0], int64(len(p)), 16)
	size = append(size, '\r', '\n')
	if o.slow {
		_ = o.conn.SetWriteDeadline(time.Now().Add(sseSlowWrite))
	}
	bufs := net.Buffers{size, p, sseCRLF}
	if _, err := bufs.WriteTo(o.conn); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush does nothing: every Write is sent at once.
func (o *sseConn) Flush() error { return nil }

func (o *sseConn) SetWriteDeadline(t time.Time) error { return o.conn.SetWriteDeadline(t) }

// watch calls gone once the client has closed the connection (what it sends meanwhile,
// nothing normally, is dropped), as net/http does for a request it serves.
func (o *sseConn) watch(gone func()) {
	var b [16]byte
	for {
		if _, err := o.conn.Read(b[:]); err != nil {
			gone()
			return
		}
	}
}

// end ends the body and closes the connection.
func (o *sseConn) end() {
	_ = o.conn.SetWriteDeadline(time.Now().Add(time.Second))
	_, _ = o.conn.Write([]byte("0\r\n\r\n"))
	_ = o.conn.Close()
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
