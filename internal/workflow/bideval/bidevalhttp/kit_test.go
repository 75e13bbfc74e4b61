package bidevalhttp_test

import (
	"testing"

	"weft/internal/app/servertest"
	"weft/internal/postgres/pgtest"
	"weft/internal/runner"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// text strips tags, for asserting what a user reads.
func text(html string) string { return servertest.Text(html) }

// between is the part of s from the first from to the to after it ("" without from).
func between(s, from, to string) string { return servertest.Between(s, from, to) }

// waitJob polls until the evaluation's job has the status: its thread's newest job, as an
// evaluation's thread has its id.
func waitJob(k *servertest.Kit, evaluationID string, want runner.Status) runner.Job {
	k.T.Helper()
	return k.WaitThread(evaluationID, want)
}
