package pagegen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"weft/internal/fault"
	"weft/internal/graph"
	"weft/internal/workflow"
)

// FeedbackRequest is refine_gate's interrupt payload (seed 001 §5.1: {"type":
// "need_user_feedback", "message": …}), with what a feedback box needs to show.
type FeedbackRequest struct {
	Type        string   `json:"type"`
	Message     string   `json:"message"`
	Round       int      `json:"round"`
	Pages       []string `json:"pages"`
	Suggestions []string `json:"suggestions,omitempty"`
	Examples    []string `json:"examples"`
	MaxBytes    int      `json:"max_bytes"`
	// Resumable is false when the graph has no checkpointer: the pause cannot be answered.
	Resumable bool `json:"resumable"`
	// Error says why the previous answer was refused (too long, empty).
	Error string `json:"error,omitempty"`
}

// refineGate waits for feedback: when the round's feedback is already in the state (a
// later round's input) it passes; otherwise it interrupts until an acceptable answer
// arrives. An answer refused by CheckFeedback is asked for again with the reason, so a
// bad answer never leaves the session stuck.
func (w *wf) refineGate(ctx context.Context, s GraphState) (graph.Command, error) {
	if strings.TrimSpace(s.UserFeedback) != "" {
		if err := CheckFeedback(s.UserFeedback); err != nil {
			return graph.Command{}, err
		}
		return graph.Command{}, nil
	}
	lang := LangEN
	if s.ProductDoc != nil {
		lang = s.ProductDoc.Lang
	}
	req := FeedbackRequest{Type: InterruptNeedFB, Round: len(s.Refinements) + 1, MaxBytes: MaxFeedbackBytes,
		Resumable: w.d.Checkpointer != nil,
		Message:   pick(lang, "Review the pages and say what to change, or \"no changes\" to build them as they are.", "请提供修改意见（或回复“不用改”直接生成页面）。"),
		Examples: []string{pick(lang, "make the primary colour darker", "把主色改成蓝色"), pick(lang, "add a pricing page", "加一个价格页"),
			pick(lang, "remove testimonials", "删除用户评价"), pick(lang, "bigger headings", "标题大一点")}}
	if !req.Resumable {
		req.Message = pick(lang, "This session runs without a checkpointer, so it cannot be resumed: feedback cannot be given. Run it with a checkpointer (memory, SQLite or PostgreSQL) to refine it.",
			"此会话未启用 checkpointer，无法恢复，因此不能提交修改意见。请启用 checkpointer（内存、SQLite 或 PostgreSQL）后再运行。")
	}
	for _, p := range s.PageSchemas {
		req.Pages = append(req.Pages, p.Slug)
	}
	for _, sg := range s.AestheticSuggestions {
		req.Suggestions = append(req.Suggestions, sg.Message)
	}
	for {
		raw, err := graph.Interrupt[json.RawMessage](ctx, req)
		if err != nil {
			return graph.Command{}, err
		}
		fb, err := feedbackOf(raw)
		if err == nil {
			err = CheckFeedback(fb)
		}
		if err == nil {
			return graph.Update(keyUserFeedback.Set(fb)), nil
		}
		var ie *InputError
		if errors.As(err, &ie) {
			req.Error = ie.Message
		} else {
			req.Error = err.Error()
		}
	}
}

// feedbackOf reads a resume value: {"user_feedback": "…"} or a bare string.
func feedbackOf(raw json.RawMessage) (string, error) {
	var v ResumeValue
	if err := json.Unmarshal(raw, &v); err == nil {
		return v.UserFeedback, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	return "", errors.New(`answer with {"user_feedback": "…"}`)
}

// clone deep-copies a value through JSON (state values are shared with the engine).
func clone[T any](v T) T {
	var out T
	b, err := json.Marshal(v)
	if err == nil {
		_ = json.Unmarshal(b, &out)
	}
	return out
}

// refine applies the round's feedback: the model (or the offline reader) turns it into
// edits, the edits change the doc, pages, forms and tokens, and the pages are laid out
// again. What could not be applied is recorded with the reason.
func (w *wf) refine(ctx context.Context, s GraphState) (graph.Command, error) {
	graph.Emit(ctx, NodeStart{Started: NodeRefine})
	if s.ProductDoc == nil || s.StyleTokens == nil {
		return graph.Command{}, graph.Permanent(errors.New("refine: the session has no pages to refine"))
	}
	st := &site{doc: clone(*s.ProductDoc), pages: clone(s.Pages), tokens: clone(*s.StyleTokens)}
	if s.DataModel != nil {
		st.dm = clone(*s.DataModel)
	}
	in := RefineIn{Feedback: s.UserFeedback, Lang: st.doc.Lang, Sections: st.doc.Sections, Palette: st.tokens.Palette}
	for _, p := range st.pages {
		in.Pages = append(in.Pages, p.Slug)
	}
	read, err := refineTask.Do(ctx, w.d.LLM, in)
	if err != nil {
		return graph.Command{}, err
	}
	applied, unapplied := applyEdits(st, read.Edits)
	r := Refinement{Round: len(s.Refinements) + 1, Feedback: s.UserFeedback, Applied: applied,
		Unapplied: append(read.Unapplied, unapplied...), Edits: read.Edits, At: w.d.Now().UTC()}
	if r.Applied == nil {
		r.Applied = []string{}
	}
	next := s
	next.ProductDoc, next.Pages, next.DataModel, next.StyleTokens = &st.doc, st.pages, &st.dm, &st.tokens
	reg := buildRegistry(registryInputOf(next))
	next.ComponentRegistry = reg
	schemas, err := generatePages(ctx, w.d.LLM, next, reg)
	if err != nil {
		return graph.Command{}, err
	}
	ws := []graph.Write{keyProductDoc.Set(&st.doc), keyPages.Set(st.pages), keyDataModel.Set(&st.dm), keyStyleTokens.Set(&st.tokens),
		keyComponentRegistry.Set(reg), keyPageSchemas.Set(schemas)}
	if s.AestheticEnabled { // the score card follows the refined site
		sc, sug := scoreAesthetics(&st.tokens, schemas)
		if s.AestheticScores != nil {
			r.Scores = &ScoreSketch{Before: s.AestheticScores.Overall, After: sc.Overall}
		}
		ws = append(ws, keyAestheticScores.Set(sc), keyAestheticSuggestions.Set(sug))
	}
	return graph.Update(append(ws, keyRefinements.Set([]Refinement{r}))...), nil
}

// BuildFailure is the payload of a build_failed event render emits before failing with
// an error the platform retries.
type BuildFailure struct {
	Error string `json:"error"`
	Class string `json:"class"`
}

// render builds the site, stores each page and the .zip as artifacts, and records them.
// A transient storage failure fails the node (the platform retries it); any other
// failure is recorded as build_status "failed" with the error, and the session stays
// open for another round.
func (w *wf) render(ctx context.Context, s GraphState) (graph.Command, error) {
	graph.Emit(ctx, NodeStart{Started: NodeRender})
	arts, err := w.build(ctx, s)
	if err != nil {
		class, code := fault.Classify(err)
		if class == fault.Transient {
			graph.Emit(ctx, BuildFailure{Error: err.Error(), Class: string(class)})
			return graph.Command{}, err
		}
		return graph.Update(keyBuildStatus.Set(BuildFailed), keyError.Set(code+": "+err.Error()),
			keyUserFeedback.Set("")), nil
	}
	return graph.Update(keyBuildArtifacts.Set(arts), keyBuildStatus.Set(BuildSucceeded), keyError.Set(""),
		keyUserFeedback.Set("")), nil
}

func (w *wf) build(ctx context.Context, s GraphState) (*BuildArtifacts, error) {
	if s.ProductDoc == nil || s.StyleTokens == nil || len(s.PageSchemas) == 0 {
		return nil, graph.Permanent(errors.New("render: nothing to build (no pages)"))
	}
	built, err := buildSite(*s.ProductDoc, s.PageSchemas, *s.StyleTokens, s.Assets)
	if err != nil {
		return nil, graph.Permanent(err)
	}
	round := 1
	if s.BuildArtifacts != nil {
		round = s.BuildArtifacts.Round + 1
	}
	arts := &BuildArtifacts{Round: round, Fixes: built.fixes, Tokens: &built.tokens}
	for i, p := range built.pages {
		f, err := w.store(ctx, "pages/"+p.file, p.file, "text/html; charset=utf-8", p.data)
		if err != nil {
			return nil, err
		}
		arts.Pages = append(arts.Pages, BuiltPage{Slug: p.slug, Title: p.title, StoredFile: f})
		graph.Emit(ctx, Progress{Stage: "build", Page: p.slug, Title: p.title, Index: i + 1, Total: len(built.pages)})
	}
	name := "site.zip"
	if s.SessionID != "" {
		name = sanitize(s.SessionID) + "-site.zip"
	}
	z, err := w.store(ctx, "site.zip", name, "application/zip", built.zip)
	if err != nil {
		return nil, err
	}
	arts.Zip = &z
	return arts, nil
}

func (w *wf) store(ctx context.Context, key, file, ctype string, data []byte) (StoredFile, error) {
	ref, err := w.d.Artifacts.PutArtifact(ctx, workflow.Artifact{Key: key, Name: file, ContentType: ctype, Data: data})
	if err != nil {
		if errors.Is(err, workflow.ErrArtifactInvalid) {
			err = graph.Permanent(err)
		}
		return StoredFile{}, fmt.Errorf("store %s: %w", key, err)
	}
	return StoredFile{Key: key, File: file, ArtifactID: ref.ID, Size: ref.Size, SHA256: ref.SHA256}, nil
}

// sanitize keeps a file name to letters, digits, '-' and '_'.
func sanitize(s string) string {
	out := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '-'
	}, s)
	if len(out) > 60 {
		out = out[:60]
	}
	return out
}
