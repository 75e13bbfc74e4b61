package terminal

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"weft/internal/graph"
	"weft/internal/workflow"
)

// describe is an event as a line of progress: the workflow's name for it first, when it
// names its events (seed 001 §7.2's brief_start, build_progress, …).
func (s *session) describe(ev graph.Event) string {
	name := ""
	if s.def.EventName != nil {
		if n, ok := s.def.EventName(ev); ok {
			name = "[" + n + "] "
		}
	}
	switch ev.Kind {
	case graph.KindTaskStart:
		return fmt.Sprintf("  %s%s started", name, ev.Node)
	case graph.KindTaskResult:
		res, _ := ev.Data.(graph.TaskResult)
		switch {
		case res.Error != "":
			return fmt.Sprintf("  %s%s failed (attempt %d): %s", name, ev.Node, res.Attempts, res.Error)
		case len(res.Interrupts) > 0:
			return fmt.Sprintf("  %s%s paused", name, ev.Node)
		}
		extra := ""
		if res.Cached {
			extra = ", from the cache"
		}
		return fmt.Sprintf("  %s%s done in %s%s", name, ev.Node, res.Ended.Sub(res.Started).Round(100_000), extra)
	case graph.KindCheckpoint:
		var cp graph.CheckpointSummary
		switch d := ev.Data.(type) {
		case graph.Checkpoint:
			cp = d.Summary()
		case graph.CheckpointSummary:
			cp = d
		}
		if name == "" {
			return fmt.Sprintf("  saved step %d, next %v", cp.Step, cp.Next)
		}
		return ""
	case graph.KindCustom:
		b, _ := json.Marshal(ev.Data)
		if name != "" && strings.Contains(string(b), `"started"`) {
			return fmt.Sprintf("  %s%s", name, ev.Node)
		}
		return fmt.Sprintf("  %s%s: %s", name, ev.Node, b)
	case graph.KindInterrupt:
		return fmt.Sprintf("  %s%s waits for input", name, ev.Node)
	}
	return ""
}

// blocks prints a view's blocks as text.
func (s *session) blocks(bs []workflow.Block, indent string) {
	p := func(format string, args ...any) { s.printf(indent+format+"\n", args...) }
	for _, b := range bs {
		switch v := b.(type) {
		case workflow.Heading:
			p("## %s", v.Text)
		case workflow.Paragraph:
			p("%s", v.Text)
		case workflow.Notice:
			p("(%s) %s", v.Kind, v.Text)
		case workflow.KeyValues:
			for _, kv := range v.Items {
				p("%s: %s", kv.Key, kv.Value)
			}
		case workflow.Stats:
			var parts []string
			for _, st := range v.Items {
				parts = append(parts, st.Label+" "+st.Value)
			}
			p("%s", strings.Join(parts, " · "))
		case workflow.Progress:
			p("%s (%d/%d)", v.Label, v.Done, v.Total)
		case workflow.Table:
			if v.Caption != "" {
				p("%s:", v.Caption)
			}
			for _, r := range v.Rows {
				var cells []string
				for _, c := range r.Cells {
					cells = append(cells, c.Text)
				}
				p("  %s", strings.Join(cells, " | "))
			}
		case workflow.Section:
			p("== %s", v.Title)
			s.blocks(v.Blocks, indent+"  ")
		case workflow.Downloads:
			for _, d := range v.Items {
				p("%s: %s", d.Label, s.where(d.Key))
			}
		case workflow.PagePreview:
			p("page %s: %s", v.Title, s.where(v.Key))
		case workflow.Image:
			p("image %s: %s", v.Alt, s.where(v.Key))
		case workflow.Code:
			p("%s", v.Text)
		case workflow.Quote:
			p("%s: %s", v.Title, v.Text)
		case workflow.Redline:
			p("%s: %q → %q", v.Title, v.Before, v.After)
		}
	}
}

// where is an artifact's file, when the run writes them to a folder.
func (s *session) where(key string) string {
	if s.cfg.ArtifactDir == "" {
		return key
	}
	return filepath.Join(s.cfg.ArtifactDir, filepath.FromSlash(key))
}

// readFile reads an upload's file, refusing one over limit (0: 10 MB).
func readFile(path string, limit int64) ([]byte, error) {
	if limit <= 0 {
		limit = 10 << 20
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, limit+1)) // one byte more: the field's check refuses it
}

// Dir is a workflow.ArtifactStore that writes each artifact to a folder, at its key.
type Dir struct{ Path string }

var _ workflow.ArtifactStore = Dir{}

// PutArtifact implements workflow.ArtifactStore: the same bytes again write nothing.
func (d Dir) PutArtifact(_ context.Context, a workflow.Artifact) (workflow.ArtifactRef, error) {
	if err := a.Validate(); err != nil {
		return workflow.ArtifactRef{}, err
	}
	p := filepath.Join(d.Path, filepath.FromSlash(a.Key))
	if !strings.HasPrefix(p, filepath.Clean(d.Path)+string(filepath.Separator)) {
		return workflow.ArtifactRef{}, fmt.Errorf("%w: key %q leaves the folder", workflow.ErrArtifactInvalid, a.Key)
	}
	sum := sha256.Sum256(a.Data)
	ref := workflow.ArtifactRef{ID: a.Key, Key: a.Key, Name: a.Name, ContentType: a.ContentType, Size: int64(len(a.Data)), SHA256: hex.EncodeToString(sum[:])}
	if old, err := os.ReadFile(p); err == nil && string(old) == string(a.Data) {
		return ref, nil
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return ref, err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return ref, err
	}
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, a.Data, 0o644); err != nil {
		return ref, err
	}
	return ref, os.Rename(tmp, p)
}
