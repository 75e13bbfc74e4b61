package postgres_test

import (
	"context"
	"errors"
	"testing"

	"weft/internal/graph"
	"weft/internal/postgres"
	"weft/internal/postgres/pgtest"
	"weft/internal/workflow"
)

func TestArtifactsPutIdempotentPerThreadAndTenant(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := postgres.NewArtifacts(pgtest.DB(t))
	a := workflow.Artifact{Key: "pages/home.html", Name: "home.html", ContentType: "text/html; charset=utf-8", Data: []byte("<h1>Hi</h1>")}
	first, err := s.Put(ctx, "t1", "th1", "job1", a)
	if err != nil || first.Size != int64(len(a.Data)) || first.SHA256 == "" {
		t.Fatalf("put: %+v %v", first, err)
	}
	// The same bytes again (a replayed node): nothing written, the same artifact.
	again, err := s.Put(ctx, "t1", "th1", "job2", a)
	if err != nil || again.ID != first.ID {
		t.Fatalf("put again: %+v %v", again, err)
	}
	got, err := s.Get(ctx, "t1", "th1", "pages/home.html")
	if err != nil || string(got.Data) != "<h1>Hi</h1>" || got.Version != 1 {
		t.Fatalf("get: %+v %v", got, err)
	}
	// Other bytes replace it, as a new version.
	a.Data = []byte("<h1>Hello</h1>")
	if _, err := s.Put(ctx, "t1", "th1", "job3", a); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Get(ctx, "t1", "th1", "pages/home.html"); string(got.Data) != "<h1>Hello</h1>" || got.Version != 2 {
		t.Fatalf("after a change: %q v%d", got.Data, got.Version)
	}
	// Another tenant's thread of the same id sees nothing.
	if _, err := s.Get(ctx, "t2", "th1", "pages/home.html"); !errors.Is(err, graph.ErrNotFound) {
		t.Fatalf("another tenant's get: %v, want not found", err)
	}
	if list, err := s.List(ctx, "t2", "th1"); err != nil || len(list) != 0 {
		t.Fatalf("another tenant's list: %+v %v", list, err)
	}
	if list, err := s.List(ctx, "t1", "th1"); err != nil || len(list) != 1 || list[0].Key != "pages/home.html" {
		t.Fatalf("list: %+v %v", list, err)
	}
	// A bad key is refused before anything is stored.
	for _, key := range []string{"../etc/passwd", "/abs", "a b", ""} {
		if _, err := s.Put(ctx, "t1", "th1", "job", workflow.Artifact{Key: key, Name: "x", ContentType: "text/plain", Data: []byte("x")}); !errors.Is(err, workflow.ErrArtifactInvalid) {
			t.Errorf("key %q: %v, want refused", key, err)
		}
	}
}
