package server

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
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
}

// sseHeartbeat keeps idle connections (and proxies) alive.
const sseHeartbeat = 15 * time.Second

// lastEventID is where a reconnecting client left off: the Last-Event-ID
// header the browser sends, or ?last_event_id= for a first connection that
// already rendered up to an event.
func lastEventID(c echo.Context) int64 {
	v := c.Request().Header.Get("Last-Event-ID")
	if v == "" {
		v = c.QueryParam("last_event_id")
	}
	id, _ := strconv.ParseInt(v, 10, 64)
	return id
}

// stream answers with an SSE stream of a tenant's events (one thread, or
// all when thread is ""), replayed from the client's last event id and then
// live from the event bus, so a page served by one process follows a thread
// run by another. toMessages turns each stored event into the messages to
// send (none to skip it); ids are the events' ids, so a reconnect resumes
// exactly after the last one delivered.
func (s *Server) stream(c echo.Context, tenant, thread string, toMessages func(ctx context.Context, ev postgres.StoredEvent) ([]sseMessage, error)) error {
	ctx := c.Request().Context()
	events, err := s.app.Events.Subscribe(ctx, tenant, thread, lastEventID(c))
	if err != nil {
		return err
	}
	w := c.Response()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, "retry: 2000\n\n")
	w.Flush()
	beat := time.NewTicker(sseHeartbeat)
	defer beat.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-beat.C:
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return nil
			}
			w.Flush()
		case ev, ok := <-events:
			if !ok {
				return nil
			}
			msgs, err := toMessages(ctx, ev)
			if err != nil {
				s.log.Warn("render live update", "err", err, "thread_id", ev.Thread)
				continue
			}
			if err := writeSSE(ctx, w, ev.ID, msgs); err != nil {
				return nil
			}
			w.Flush()
		}
	}
}

// writeSSE writes messages under one event id.
func writeSSE(ctx context.Context, w *echo.Response, id int64, msgs []sseMessage) error {
	for _, m := range msgs {
		data := m.Data
		if m.HTML != nil {
			var buf bytes.Buffer
			if err := m.HTML.Render(ctx, &buf); err != nil {
				return err
			}
			data = buf.String()
		}
		var b strings.Builder
		fmt.Fprintf(&b, "id: %d\nevent: %s\n", id, m.Event)
		for _, line := range strings.Split(data, "\n") {
			fmt.Fprintf(&b, "data: %s\n", line)
		}
		b.WriteString("\n")
		if _, err := w.Write([]byte(b.String())); err != nil {
			return err
		}
	}
	return nil
}
