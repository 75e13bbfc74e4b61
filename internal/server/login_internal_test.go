package server

import (
	"fmt"
	"testing"
	"time"
)

// One account signing in from many addresses pushes out only its own oldest known addresses,
// never another account's: the admin's usual address stays exempt from the account limit.
func TestKnownAddressesPerAccount(t *testing.T) {
	k := &knownAddresses{at: map[string]map[string]time.Time{}}
	k.add("admin@demo.weft", "192.0.2.50")
	for i := range 10 * knownPerAccount {
		k.add("mallory@demo.weft", fmt.Sprintf("203.0.113.%d", i))
	}
	if !k.has("admin@demo.weft", "192.0.2.50") {
		t.Fatal("another account's sign-ins pushed out the admin's address")
	}
	if k.has("mallory@demo.weft", "203.0.113.0") || !k.has("mallory@demo.weft", fmt.Sprintf("203.0.113.%d", 10*knownPerAccount-1)) {
		t.Fatal("an account keeps its oldest addresses and not its newest")
	}
	if n := len(k.at["mallory@demo.weft"]); n != knownPerAccount {
		t.Fatalf("the account keeps %d addresses, want %d", n, knownPerAccount)
	}
}

// A refused sign-in learns when its address has an attempt again: at 10 a minute, 6 seconds
// after the last of 10 failures (longer for each attempt still in flight), said in words.
func TestFailureLimiterSaysWhen(t *testing.T) {
	t.Parallel()
	l := &failureLimiter{rate: 10.0 / 60, burst: 10, idle: time.Minute, byKey: map[string]*failures{}}
	for range 10 {
		done, _, ok := l.start("192.0.2.1")
		if !ok {
			t.Fatal("an attempt within the burst was refused")
		}
		done(true)
	}
	_, wait, ok := l.start("192.0.2.1")
	if ok || wait <= 5*time.Second || wait > 6*time.Second {
		t.Fatalf("the 11th failure: ok %v, wait %v; want refused, about 6 s", ok, wait)
	}
	if done, _, ok := l.start("192.0.2.2"); !ok {
		t.Fatal("another address was refused")
	} else {
		done(false)
	}
	for secs, want := range map[int]string{1: "1 second", 6: "6 seconds", 59: "59 seconds", 60: "1 minute", 61: "2 minutes", 600: "10 minutes"} {
		if got := inSeconds(secs); got != want {
			t.Errorf("inSeconds(%d) = %q, want %q", secs, got, want)
		}
	}
}
