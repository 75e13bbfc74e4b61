// Package pagegen is the page-generation workflow of seed 001 ("Instant Coffee"): a
// request (and optionally a logo) becomes a small static website, refined by the user's
// feedback through an interrupt, built as HTML + CSS artifacts and a .zip.
//
//	START → (new request) brief → style_extractor → component_registry → generate
//	      → should_score_aesthetic: aesthetic_scorer → refine_gate | refine_gate
//	      → should_refine: refine → render | render → END
//	START → (pages exist, same request) refine_gate → …   (a later round on the session)
//
// brief and generate retry transient failures (RetryPolicy max_attempts=2);
// style_extractor and component_registry are cached by their inputs (CachePolicy with a
// TTL); refine_gate pauses with interrupt({"type": "need_user_feedback", …}) until the
// feedback arrives (Command(resume={"user_feedback": …})). thread_id = session_id.
//
// Model calls go through llm.Task (brief, generate_page, refine), each with an Offline
// answer computed from its input; the rest (colour quantisation, WCAG contrast, scoring,
// rendering) is computed. It imports internal/graph, internal/workflow, internal/llm,
// internal/fault, the standard library, go-colorful and x/image.
package pagegen

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"weft/internal/fault"
	"weft/internal/graph"
	"weft/internal/llm"
	"weft/internal/workflow"
)

// Name is the workflow's registry name.
const Name = "page_generation"

// Node names, exactly seed 001 §4.1.
const (
	NodeBrief       = "brief"
	NodeStyle       = "style_extractor"
	NodeRegistry    = "component_registry"
	NodeGenerate    = "generate"
	NodeAesthetic   = "aesthetic_scorer"
	NodeRefineGate  = "refine_gate"
	NodeRefine      = "refine"
	NodeRender      = "render"
	InterruptNeedFB = "need_user_feedback"
)

// Deps are the workflow's collaborators.
type Deps struct {
	LLM       llm.Provider
	Artifacts workflow.ArtifactStore
	// Checkpointer saves sessions; nil compiles a graph whose sessions cannot be resumed
	// (seed 001 §6.1 allows it for demos and tests; refine_gate then says so).
	Checkpointer graph.Checkpointer
	// Cache holds style_extractor's and component_registry's results (nil: in memory).
	Cache    graph.Cache
	CacheTTL time.Duration // default 24h
	Now      func() time.Time
	// Clock, when set, is the engine's clock (retry waits, cache expiry).
	Clock graph.Clock
}

// New compiles the page-generation graph.
func New(d Deps) (*graph.Graph[GraphState], error) {
	if d.LLM == nil || d.Artifacts == nil {
		return nil, errors.New("pagegen: LLM and Artifacts are required")
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.CacheTTL <= 0 {
		d.CacheTTL = 24 * time.Hour
	}
	if d.Cache == nil {
		d.Cache = graph.NewMemoryCache(d.Clock)
	}
	w := &wf{d: d}
	retry := graph.WithRetry[GraphState](graph.RetryPolicy{InitialInterval: 200 * time.Millisecond, BackoffFactor: 2,
		MaxAttempts: 2, RetryOn: func(err error) bool { c, _ := fault.Classify(err); return c == fault.Transient }})
	writes := func(ks ...interface{ Name() string }) graph.NodeOption[GraphState] {
		names := make([]string, len(ks))
		for i, k := range ks {
			names[i] = k.Name()
		}
		return graph.WithWrites[GraphState](names...)
	}
	b := graph.New[GraphState]()
	b.AddNode(NodeBrief, w.brief, retry, writes(keySessionID, keyProductDoc, keyPages, keyDataModel, keyUserFeedback, keyError))
	b.AddNode(NodeStyle, w.styleExtractor, writes(keyStyleTokens),
		graph.WithCache(graph.CachePolicy[GraphState]{Key: styleKey, TTL: d.CacheTTL}))
	b.AddNode(NodeRegistry, w.componentRegistry, writes(keyComponentRegistry),
		graph.WithCache(graph.CachePolicy[GraphState]{Key: registryKey, TTL: d.CacheTTL}))
	b.AddNode(NodeGenerate, w.generate, retry, writes(keyPageSchemas, keyAestheticScores, keyAestheticSuggestions))
	b.AddNode(NodeAesthetic, w.aestheticScorer, writes(keyAestheticScores, keyAestheticSuggestions))
	b.AddNode(NodeRefineGate, w.refineGate, writes(keyUserFeedback))
	b.AddNode(NodeRefine, w.refine, writes(keyProductDoc, keyPages, keyDataModel, keyStyleTokens, keyComponentRegistry,
		keyPageSchemas, keyAestheticScores, keyAestheticSuggestions, keyRefinements))
	b.AddNode(NodeRender, w.render, writes(keyBuildArtifacts, keyBuildStatus, keyError, keyUserFeedback))

	b.AddConditionalEdges(graph.START, graph.Pick(startRoute), map[string]string{"brief": NodeBrief, "refine_gate": NodeRefineGate})
	b.AddEdge(NodeBrief, NodeStyle)
	b.AddEdge(NodeStyle, NodeRegistry)
	b.AddEdge(NodeRegistry, NodeGenerate)
	b.AddConditionalEdges(NodeGenerate, graph.Pick(shouldScoreAesthetic), map[string]string{"aesthetic": NodeAesthetic, "skip": NodeRefineGate})
	b.AddEdge(NodeAesthetic, NodeRefineGate)
	b.AddConditionalEdges(NodeRefineGate, graph.Pick(shouldRefine), map[string]string{"refine": NodeRefine, "render": NodeRender})
	b.AddEdge(NodeRefine, NodeRender)
	b.AddEdge(NodeRender, graph.END)

	opts := []graph.CompileOption{graph.WithName(Name), graph.WithCacheStore(d.Cache), graph.WithRecursionLimit(20)}
	if d.Checkpointer != nil {
		opts = append(opts, graph.WithCheckpointer(d.Checkpointer))
	}
	if d.Clock != nil {
		opts = append(opts, graph.WithClock(d.Clock))
	}
	return b.Compile(opts...)
}

type wf struct{ d Deps }

// startRoute: a session whose pages exist, run again with the same request, is a new
// refine round (refine_gate takes the feedback from the input, or asks for it); anything
// else is a new request.
func startRoute(s GraphState) string {
	if len(s.PageSchemas) > 0 && s.ProductDoc != nil && s.ProductDoc.Request == strings.TrimSpace(s.UserInput) {
		return "refine_gate"
	}
	return "brief"
}

// shouldScoreAesthetic is seed 001's should_score: the aesthetic check when enabled.
func shouldScoreAesthetic(s GraphState) string {
	if s.AestheticEnabled {
		return "aesthetic"
	}
	return "skip"
}

// shouldRefine is seed 001's should_refine: "no changes" (in any words refine reads as
// such) goes straight to render.
func shouldRefine(s GraphState) string {
	if IsNoChange(s.UserFeedback) {
		return "render"
	}
	return "refine"
}

// IsNoChange reports whether feedback asks for no change at all ("no changes", "looks
// good", "不用改").
func IsNoChange(feedback string) bool {
	out := parseFeedback(feedback, detectLang(feedback))
	if len(out.Unapplied) > 0 || len(out.Edits) == 0 {
		return false
	}
	for _, e := range out.Edits {
		if e.Op != OpNoChange {
			return false
		}
	}
	return true
}

func (w *wf) brief(ctx context.Context, s GraphState) (graph.Command, error) {
	graph.Emit(ctx, NodeStart{Started: NodeBrief})
	text := strings.TrimSpace(s.UserInput)
	if err := (Request{Text: text}).Validate(); err != nil {
		return graph.Command{}, err
	}
	out, err := briefTask.Do(ctx, w.d.LLM, BriefIn{Request: text, Lang: detectLang(text)})
	if err != nil {
		return graph.Command{}, err
	}
	session := s.SessionID
	if t, ok := graph.CurrentTask(ctx); ok && session == "" {
		session = t.ThreadID
	}
	dm := out.DataModel
	return graph.Update(keySessionID.Set(session), keyProductDoc.Set(&out.ProductDoc), keyPages.Set(out.Pages),
		keyDataModel.Set(&dm), keyUserFeedback.Set(""), keyError.Set("")), nil
}

// styleKey and registryKey are the cache keys: a hash of exactly what the node reads.
func styleKey(s GraphState) string {
	h := sha256.New()
	name := ""
	if s.ProductDoc != nil {
		name = s.ProductDoc.Name
	}
	fmt.Fprintf(h, "style/v1\x00%s\x00%s\x00", strings.TrimSpace(s.UserInput), name)
	if a := logoAsset(s.Assets); a != nil {
		h.Write(a.Data)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func registryKey(s GraphState) string {
	b, _ := json.Marshal(registryInputOf(s))
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func registryInputOf(s GraphState) registryInput {
	in := registryInput{Version: RegistryVersion, Bold: mentions(foldText(s.UserInput), `bold|vibrant|colou?rful|striking|energetic|醒目|活力|鲜艳|大胆`)}
	if s.ProductDoc != nil {
		in.Sections, in.Removed = s.ProductDoc.Sections, s.ProductDoc.Removed
	}
	for _, p := range s.Pages {
		in.Pages = append(in.Pages, p.Slug)
	}
	if s.DataModel != nil {
		in.Forms = len(s.DataModel.Entities)
	}
	return in
}

func (w *wf) styleExtractor(_ context.Context, s GraphState) (graph.Command, error) {
	if s.ProductDoc == nil {
		return graph.Command{}, graph.Permanent(errors.New("style_extractor: no product doc (brief did not run)"))
	}
	logo := logoAsset(s.Assets)
	if logo != nil {
		if err := checkLogo(*logo); err != nil {
			return graph.Command{}, err
		}
	}
	t, err := extractStyle(styleInput{Request: s.UserInput, Name: s.ProductDoc.Name, Logo: logo})
	if err != nil {
		return graph.Command{}, err
	}
	return graph.Update(keyStyleTokens.Set(t)), nil
}

func (w *wf) componentRegistry(_ context.Context, s GraphState) (graph.Command, error) {
	return graph.Update(keyComponentRegistry.Set(buildRegistry(registryInputOf(s)))), nil
}

func (w *wf) generate(ctx context.Context, s GraphState) (graph.Command, error) {
	graph.Emit(ctx, NodeStart{Started: NodeGenerate})
	if s.ProductDoc == nil || s.ComponentRegistry == nil {
		return graph.Command{}, graph.Permanent(errors.New("generate: no product doc or component registry"))
	}
	schemas, err := generatePages(ctx, w.d.LLM, s, s.ComponentRegistry)
	if err != nil {
		return graph.Command{}, err
	}
	// A new generation's scores are measured again (or stay empty when the check is off).
	return graph.Update(keyPageSchemas.Set(schemas), keyAestheticScores.Set(nil), keyAestheticSuggestions.Set(nil)), nil
}

func (w *wf) aestheticScorer(_ context.Context, s GraphState) (graph.Command, error) {
	if s.StyleTokens == nil {
		return graph.Command{}, graph.Permanent(errors.New("aesthetic_scorer: no style tokens"))
	}
	sc, sug := scoreAesthetics(s.StyleTokens, s.PageSchemas)
	return graph.Update(keyAestheticScores.Set(sc), keyAestheticSuggestions.Set(sug)), nil
}
