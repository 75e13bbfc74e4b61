// Package workflow is the plug-in contract between a workflow and the
// platform: what a workflow gives the console, the API and the runner
// (start fields, review forms and decisions, views, event names, artifacts)
// as data. It imports internal/graph and the standard library only: no echo,
// no pgx, no templ.
package workflow
