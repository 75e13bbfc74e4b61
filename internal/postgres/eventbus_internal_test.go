package postgres

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
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
	r.listening = true // no listener goroutine
	mk := func(tenant, thread string, last int64) *subscription {
		s := &subscription{tenant: tenant, thread: thread, wake: make(chan struct{}, 1), cancel: func() {}}
		s.last.Store(last)
		if err := r.add(s, nil); err != nil {
			t.Fatal(err)
		}
		r.wg.Done() // no serve goroutine
		return s
	}
	th1 := mk("acme", "t1", 0)
	th2 := mk("acme", "t2", 0)
	thOther := mk("globex", "g1", 0)
	dash := mk("acme", "", 0)
	dashOther := mk("globex", "", 0)
	caughtUp := mk("acme", "t1", 100)
	all := []*subscription{th1, th2, thOther, dash, dashOther, caughtUp}
	woken := func() []bool {
		out := make([]bool, len(all))
		for i, s := range all {
			select {
			case <-s.wake:
				out[i] = true
			default:
			}
		}
		return out
	}
	tests := []struct {
		payload string
		want    []bool // th1, th2, thOther, dash, dashOther, caughtUp
	}{
		{`{"max_id":50,"tenants":["acme"],"threads":["t1"]}`, []bool{true, false, false, true, false, false}},
		{`{"max_id":150,"tenants":["acme"],"threads":["t1"]}`, []bool{true, false, false, true, false, true}},
		{`{"max_id":50,"tenants":["globex"],"all_threads":true}`, []bool{false, false, true, false, true, false}},
		{`{"max_id":50,"all":true}`, []bool{true, true, true, true, true, false}},
		{`not json`, []bool{true, true, true, true, true, true}},
	}
	for _, tt := range tests {
		r.dispatch(tt.payload)
		if got := woken(); mustJSON(t, got) != mustJSON(t, tt.want) {
			t.Errorf("dispatch(%s) woke %v, want %v", tt.payload, got, tt.want)
		}
	}
	r.remove(th1)
	r.remove(caughtUp)
	if len(r.byThread["t1"]) != 0 || r.byThread["t1"] != nil {
		t.Fatalf("t1 still indexed: %v", r.byThread)
	}
}
