package postgres_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"weft/internal/graph"
	"weft/internal/postgres"
)

func TestZZRead(t *testing.T) {
	ctx := context.Background()
	d := openBench(&testing.B{})
	s := postgres.NewCheckpointer(d)
	head, versions := "", map[string]string{}
	for i := range 10000 {
		cid := newID()
		blobs := []graph.Blob{{Channel: "log", Version: cid, Data: []byte(fmt.Sprintf(`["step %d: revised the draft"]`, i))}}
		if i > 0 {
			blobs[0].Delta, blobs[0].Base = true, versions["log"]
		}
		nv := map[string]string{"log": cid}
		cp := graph.Checkpoint{ID: cid, ParentID: head, ThreadID: "x", Step: i, Source: graph.SourceLoop, CreatedAt: time.Now(), Versions: nv}
		if err := s.Put(ctx, graph.PutRequest{Checkpoint: cp, Blobs: blobs, ExpectHead: head}); err != nil {
			t.Fatal(err)
		}
		head, versions = cid, nv
		if i == 9 || i == 999 || i == 9999 {
			d.Pool().Exec(ctx, "VACUUM ANALYZE")
			var ts []time.Duration
			for range 50 {
				st := time.Now()
				tp, err := s.GetTuple(ctx, "x", "", "")
				if err != nil {
					t.Fatal(err)
				}
				_ = tp
				ts = append(ts, time.Since(st))
			}
			var sum time.Duration
			for _, x := range ts {
				sum += x
			}
			t.Logf("len %d: mean get %v", i+1, sum/50)
		}
	}
	// one big row read
	d.Pool().Exec(ctx, "CREATE TABLE big (id int primary key, v bytea); INSERT INTO big SELECT 1, string_agg(convert_to('\"step '||g||': revised the draft\"', 'UTF8'), ',') FROM generate_series(1,10000) g; CREATE TABLE big2 (id int primary key, v bytea); ALTER TABLE big2 ALTER v SET STORAGE EXTERNAL; INSERT INTO big2 SELECT * FROM big")
	for _, tb := range []string{"big", "big2"} {
		st := time.Now()
		for range 50 {
			var b []byte
			if err := d.Pool().QueryRow(ctx, "SELECT v FROM "+tb+" WHERE id = 1").Scan(&b); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("%s: %v", tb, time.Since(st)/50)
	}
}
