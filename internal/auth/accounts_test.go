package auth_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"weft/internal/auth"
	"weft/internal/postgres/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestCheckPassword: the rules people's passwords meet.
func TestCheckPassword(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		pw     string
		inputs []string
		want   string // "" accepted
	}{
		{"short1", nil, "at least 10 characters"},
		{strings.Repeat("x", 73), nil, "longer than 72 bytes"},
		{"password123", nil, "leaked"},
		{"iloveyou12", nil, "leaked"},
		{"aaaaaaaaaaaa", nil, "too easy to guess"},
		{"nora.north", []string{"Nora North", "nora@x.example"}, "too easy to guess"},
		{"granite falcon umbrella 42", nil, ""},
		{"lantern orbit cactus 7741", []string{"Ann Lee"}, ""},
	} {
		err := auth.CheckPassword(c.pw, c.inputs...)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%q refused: %v", c.pw, err)
		case c.want != "" && (!errors.Is(err, auth.ErrWeakPassword) || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%q: %v, want refused saying %q", c.pw, err, c.want)
		}
	}
}

// TestLastAdminRace: two admins who deactivate each other at once: one wins, the other is
// refused, and the tenant keeps an active admin.
func TestLastAdminRace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc := auth.New(pgtest.DB(t), auth.Options{HashCost: bcrypt.MinCost})
	if _, err := svc.CreateTenant(ctx, "cli:test", "twins", "Twins Ltd"); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range []string{"a@twins.example", "b@twins.example"} {
		acc, _, err := svc.CreateAccount(ctx, "cli:test", auth.NewAccount{TenantID: "twins", Email: e, Name: e, Role: auth.Admin})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, acc.ID)
	}
	for round := range 5 {
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = svc.SetActive(ctx, ids[i], "twins", ids[1-i], false)
			}()
		}
		wg.Wait()
		refused := 0
		for _, err := range errs {
			if errors.Is(err, auth.ErrLastAdmin) {
				refused++
			} else if err != nil {
				t.Fatal(err)
			}
		}
		accs, _ := svc.Accounts(ctx, "twins")
		active := 0
		for _, a := range accs {
			if a.Active() {
				active++
			}
		}
		if refused != 1 || active != 1 {
			t.Fatalf("round %d: %d refused, %d active admins; want 1 and 1", round, refused, active)
		}
		for _, id := range ids { // both active again for the next round
			if _, err := svc.SetActive(ctx, "cli:test", "twins", id, true); err != nil {
				t.Fatal(err)
			}
		}
	}
}
