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
