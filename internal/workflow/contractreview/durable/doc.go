// Package durable holds the contract review's proofs on the platform: the seed's §9 flow
// run by the durable runner on PostgreSQL and driven through the API (start with an
// uploaded contract, waiting_review at each clause with changes, per-change decisions
// written with update_state, the summary and its artifacts), a worker process killed in the
// middle of a clause, two reviewers deciding at once, and the bad inputs of issue 35. It has
// no code of its own: everything is in its tests, which import internal/app, internal/server,
// internal/auth, internal/postgres/pgtest and the workflow.
package durable
