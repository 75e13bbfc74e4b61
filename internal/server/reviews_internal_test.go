package server

import (
	"slices"
	"testing"
)

// A session that ends under a page sends its htmx requests to sign in and back to that page.
func TestLoginFrom(t *testing.T) {
	checkPaths(t, "loginFrom", loginFrom, map[string]string{
		"http://x/reviews/j1":           "/login?ended=1&next=%2Freviews%2Fj1",
		"http://x/login?next=%2Faudit":  "/login?ended=1",
		"http://x":                      "/login?ended=1",
		"not a url %zz":                 "/login?ended=1",
		"http://x//evil.example/path":   "/login?ended=1",
		"http://x/threads/t%201?tab=st": "/login?ended=1&next=%2Fthreads%2Ft%25201%3Ftab%3Dst",
	})
}

// A sign-in's next page is a path of this site or nothing: never a way off it.
func TestSafeNext(t *testing.T) {
	checkPaths(t, "safeNext", safeNext, map[string]string{
		"/reviews/j1?x=1":       "/reviews/j1?x=1",
		"/threads/t%201":        "/threads/t%201",
		"//evil.example":        "",
		"/\t/evil.example":      "",
		"/\n/evil.example":      "",
		"/\\evil.example":       "",
		"/\x7f/evil.example":    "",
		"https://evil.example/": "",
		"evil.example":          "",
		"":                      "",
	})
}

// checkPaths checks f (named name) maps each input to its wanted path.
func checkPaths(t *testing.T, name string, f func(string) string, want map[string]string) {
	t.Helper()
	for in, w := range want {
		if got := f(in); got != w {
			t.Errorf("%s(%q) = %q, want %q", name, in, got, w)
		}
	}
}

// A bulk action's refusals name the entries left for one reason together, once per reason,
// in the order first met, each group as a sentence; a superseded entry's reason is worded for
// one entry or several (its thread's latest run, which the same action may have just started,
// is not named: entries of one thread share one reason).
func TestRefusalsGroupByReason(t *testing.T) {
	var r refusals
	r.add("…a1", "This entry was already retried.")
	r.add("…b2", supersededReason)
	r.add("…c3", "This entry was already retried.")
	r.add("…d4", "This entry was already retried")
	r.add("…e5", supersededReason)
	got := r.sentences()
	want := []string{"The entries of …a1, …c3 and …d4: this entry was already retried.",
		"The entries of …b2 and …e5: their threads were started again since the jobs failed, and retrying these older runs would take the threads back to where they failed; discard these entries instead."}
	if !slices.Equal(got, want) {
		t.Fatalf("refusals:\n%q\nwant\n%q", got, want)
	}
	var one refusals
	one.add("…f6", supersededReason)
	if got := one.sentences(); len(got) != 1 || got[0] != "The entry of …f6: its thread was started again since the job failed, and retrying this older run would take the thread back to where it failed; discard this entry instead." {
		t.Fatalf("one superseded entry: %q", got)
	}
}
