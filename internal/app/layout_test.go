package app_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// sharedLayers are the packages that must know no workflow (DESIGN.md, issue 33): the
// console and API, the runner, the core store, the platform the server takes, and the
// generic pages. Only internal/app's workflows.go, and each workflow's own packages, name
// workflows.
var sharedLayers = []string{
	"weft/internal/server", "weft/internal/server/mount", "weft/internal/runner", "weft/internal/postgres",
	"weft/internal/app/platform", "weft/web/page", "weft/web/layout", "weft/web/component",
}

// knownDebt are the workflow packages a shared layer still imports, with why: each goes when
// its reason does, and then must leave this list.
var knownDebt = map[string][]string{}

// workflowPackage reports whether path is a specific workflow's package: one below
// internal/workflow (its contract's test helpers aside), a workflow's sqlc package below db/, or
// its pages below web/workflow.
func workflowPackage(path string) bool {
	rest, ok := strings.CutPrefix(path, "weft/internal/workflow/")
	if ok {
		return !strings.HasPrefix(rest, "workflowtest")
	}
	return strings.HasPrefix(path, "weft/db/") || strings.HasPrefix(path, "weft/web/workflow/")
}

// TestSharedLayersKnowNoWorkflow: no shared layer depends, directly or not, on a specific
// workflow's package (go list -deps), but for the known debt.
func TestSharedLayersKnowNoWorkflow(t *testing.T) {
	t.Parallel()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is not on PATH: %v", err)
	}
	for _, pkg := range sharedLayers {
		out, err := exec.Command(goTool, "list", "-deps", "-f", "{{.ImportPath}}", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		var found []string
		for _, dep := range strings.Fields(string(out)) {
			if workflowPackage(dep) && !slices.Contains(knownDebt[pkg], dep) {
				found = append(found, dep)
			}
		}
		if len(found) > 0 {
			t.Errorf("%s depends on workflow packages %v: it may know workflows only through internal/workflow", pkg, found)
		}
		for _, debt := range knownDebt[pkg] {
			if !slices.Contains(strings.Fields(string(out)), debt) {
				t.Errorf("%s no longer depends on %s: take it off knownDebt", pkg, debt)
			}
		}
	}
}
