// Package contractreview is the contract-review workflow of seed 002: a
// clause-by-clause review of a contract for one party. The graph is the
// seed's (init → parse_document → the clause loop of clause_analyze,
// clause_generate_diffs, clause_validate, human_approval and save_clause →
// summarize), with its state ReviewGraphState. Nodes do real work: a
// structure parser for FIDIC, "Article" and Chinese numbering, a FIDIC
// Silver Book checklist, six rules plus the provider (through llm.Task) for
// risks that cite their words, redlines that are validated and redrafted, a
// pause before human_approval for the reviewer's per-diff decisions (given
// with update_state, seed §7), and, at the end, the contract as a Word
// document with the approved changes as tracked changes and an HTML redline.
//
// The package exports what the platform wires: New(Deps) builds the graph;
// Definition(Deps) is the workflow on the plug-in contract (plugin.go): a start
// form that reads the uploaded contract with internal/doctext, the review of a
// paused clause (reviewform.go: the clause with its risks' words marked, each
// change a redline to approve or reject; Decide writes the decisions with
// update_state as clause_validate), and the thread page's panel and report
// (views.go). Start.Writes checks a start; Paused, PendingDiffs, DecisionWrites
// and ApplyDecisions serve the review form and the API; WordDiff gives a diff's
// redline; DemoContracts the samples.
//
// It imports internal/graph, internal/workflow, internal/llm, internal/fault,
// internal/doctext, internal/usertext, the standard library and
// github.com/sergi/go-diff; never a database, echo or templ.
package contractreview
