package main

import (
	"io/fs"
	"runtime"
	"runtime/debug"
	"strings"

	"weft/migrations"
)

// versionLine says which build this is: the module's version, the commit it was built from
// (+dirty when the tree had changes), Go's version, and the newest migration it carries (the
// schema it migrates a database to).
func versionLine() string {
	version, commit, dirty := "(devel)", "", false
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	line := "weft " + version
	if commit != "" {
		if len(commit) > 12 {
			commit = commit[:12]
		}
		if dirty {
			commit += "+dirty"
		}
		line += " commit " + commit
	}
	line += " " + runtime.Version()
	if m := newestMigration(); m != "" {
		line += " schema " + m
	}
	return line
}

// newestMigration is the name of the newest embedded migration, without .sql ("" if none).
func newestMigration() string {
	names, _ := fs.Glob(migrations.FS, "*.sql")
	if len(names) == 0 {
		return ""
	}
	return strings.TrimSuffix(names[len(names)-1], ".sql") // Glob sorts
}
