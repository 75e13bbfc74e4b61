package postgres

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"weft/internal/graph"
)

func TestNotifyPayload(t *testing.T) {
	t.Parallel()
	many := func(prefix string, n int) []string {
		s := make([]string, n)
		for i := range s {
			s[i] = prefix + strconv.Itoa(i) + strings.Repeat("x", 30)
		}
		return s
	}
	tests := []struct {
		name             string
		tenants, threads []string
		want             notification
	}{
		{"distinct", []string{"a", "a", "b"}, []string{"t1", "t2", "t1"},
			notification{Tenants: []string{"a", "b"}, Threads: []string{"t1", "t2"}}},
		{"too many threads", []string{"a"}, many("t", 500),
			notification{Tenants: []string{"a"}, AllThreads: true}},
		{"too many tenants", many("a", 500), many("t", 500), notification{All: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := notifyPayload(tt.tenants, tt.threads)
			if payloadLen(b) > maxPayload {
				t.Fatalf("payload of %d bytes", len(b))
			}
			var got notification
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			if g, w := mustJSON(t, got), mustJSON(t, tt.want); g != w {
				t.Fatalf("payload %s, want %s", g, w)
			}
		})
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestJSONBSafe(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{`{"a":"b"}`, `{"a":"b"}`},
		{`"x\u0000y"`, `"x\ufffdy"`},
		{`"\\u0000"`, `"\\u0000"`},   // an escaped backslash, then text
		{`"\\\u0000"`, `"\\\ufffd"`}, // an escaped backslash, then NUL
		{`["\u0000","\"\u0000"]`, `["\ufffd","\"\ufffd"]`},
		{`"\u00001"`, `"\ufffd1"`},
	}
	for _, tt := range tests {
		if got := string(jsonbSafe([]byte(tt.in))); got != tt.want {
			t.Errorf("jsonbSafe(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestCleanText(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"abc": "abc", "a\x00b": "a\uFFFDb", "a\xffb": "a\uFFFDb", "": ""} {
		if got := cleanText(in); got != want {
			t.Errorf("cleanText(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDispatch(t *testing.T) {
	t.Parallel()
	var r subscribers
	r.init()
	// No reader or listener: the test dispatches by hand.
	start := func(context.Context) (int64, context.CancelFunc, error) { return 10, func() {}, nil }
	mk := func(tenant, thread string, max int) *subscription {
		s := &subscription{tenant: tenant, thread: thread, max: max, wake: make(chan struct{}, 1), cancel: func() {}}
		head, err := r.add(context.Background(), s, start)
		if err != nil || head != 10 {
			t.Fatalf("add: head %d, %v", head, err)
		}
		r.wg.Done() // no serve goroutine
		return s
	}
	th1 := mk("acme", "t1", 100)
	th2 := mk("acme", "t2", 100)
	otherT1 := mk("globex", "t1", 100) // the same thread id in another tenant
	dash := mk("acme", "", 100)
	dashOther := mk("globex", "", 100)
	small := mk("acme", "t1", 2)
	all := []*subscription{th1, th2, otherT1, dash, dashOther, small}
	ids := func(s *subscription) string {
		evs, lagged := s.take(nil)
		var out []string
		for _, e := range evs {
			out = append(out, strconv.FormatInt(e.ID, 10))
		}
		if lagged {
			out = append(out, "lagged")
		}
		return strings.Join(out, ",")
	}
	e := func(id int64, tenant, thread string) *StoredEvent {
		return &StoredEvent{ID: id, TenantID: tenant, Event: graph.Event{Thread: thread}}
	}
	r.dispatch([]*StoredEvent{e(11, "acme", "t1"), e(12, "globex", "t1"), e(13, "acme", "t2"), e(14, "acme", "t1")}, 14)
	want := []string{"11,14", "13", "12", "11,13,14", "12", "11,14"}
	for i, s := range all {
		if got := ids(s); got != want[i] {
			t.Errorf("subscription %d got %q, want %q", i, got, want[i])
		}
	}
	if h := r.headID(); h != 14 {
		t.Fatalf("head %d, want 14", h)
	}
	// Overflow: the small buffer is dropped and marked; the others are untouched.
	r.dispatch([]*StoredEvent{e(15, "acme", "t1"), e(16, "acme", "t1"), e(17, "acme", "t1")}, 17)
	if got := ids(small); got != "lagged" {
		t.Fatalf("small buffer got %q, want lagged", got)
	}
	if got := ids(th1); got != "15,16,17" {
		t.Fatalf("th1 got %q", got)
	}
	r.dispatch([]*StoredEvent{e(18, "acme", "t1")}, 18)
	if got := ids(small); got != "18" {
		t.Fatalf("small buffer after lagging got %q, want 18", got)
	}
	// A notification of a batch already read does not wake the reader.
	r.notified(`{"max_id":18,"tenants":["acme"],"threads":["t1"]}`)
	select {
	case <-r.wakeRead:
		t.Fatal("woken for a batch already read")
	default:
	}
	for _, p := range []string{`{"max_id":19,"all":true}`, `not json`} {
		r.notified(p)
		select {
		case <-r.wakeRead:
		default:
			t.Fatalf("not woken by %s", p)
		}
	}
	for _, s := range []*subscription{th1, small} {
		r.remove(s)
	}
	if _, ok := r.byThread[threadKey{"acme", "t1"}]; ok {
		t.Fatalf("acme/t1 still indexed: %v", r.byThread)
	}
}
