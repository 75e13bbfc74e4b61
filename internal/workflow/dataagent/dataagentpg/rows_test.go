package dataagentpg_test

import (
	"context"
	"math"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
)

// queryRows runs a hand-written query as the test role and returns its
// rows as PostgreSQL's text.
func queryRows(t *testing.T, pool *pgxpool.Pool, sql string) [][]string {
	t.Helper()
	conn, err := pool.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	res := conn.Conn().PgConn().ExecParams(context.Background(), sql, nil, nil, nil, nil).Read()
	if res.Err != nil {
		t.Fatalf("%s: %v", sql, res.Err)
	}
	out := [][]string{}
	for _, r := range res.Rows {
		row := make([]string, len(r))
		for i, v := range r {
			row[i] = string(v)
		}
		out = append(out, row)
	}
	return out
}

// sameRows compares rows cell by cell, numbers within 0.00005.
func sameRows(got, want [][]string) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if len(got[i]) != len(want[i]) {
			return false
		}
		for j := range got[i] {
			a, errA := strconv.ParseFloat(got[i][j], 64)
			b, errB := strconv.ParseFloat(want[i][j], 64)
			if errA == nil && errB == nil {
				if math.Abs(a-b) > 0.00005 {
					return false
				}
			} else if got[i][j] != want[i][j] {
				return false
			}
		}
	}
	return true
}
