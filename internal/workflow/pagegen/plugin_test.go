package pagegen_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"weft/internal/checkpoint"
	"weft/internal/graph"
	"weft/internal/llm"
	"weft/internal/workflow"
	"weft/internal/workflow/pagegen"
	"weft/internal/workflow/workflowtest"
)

func definition(t *testing.T) workflow.Definition {
	t.Helper()
	d, err := pagegen.Definition(pagegen.Deps{LLM: llm.NewOffline(), Artifacts: workflowtest.NewArtifacts(), Checkpointer: checkpoint.NewMemory()})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestStartFormRefusals(t *testing.T) {
	t.Parallel()
	def := definition(t)
	ctx := context.Background()
	start := func(texts map[string]string, files map[string]workflow.File) error {
		v, err := def.Start.ParseForm(texts, files)
		if err != nil {
			return err
		}
		_, err = def.Start.Start(ctx, workflow.StartRequest{TenantID: "t"}, v)
		return err
	}
	big := make([]byte, 10<<20)
	for _, tc := range []struct {
		name  string
		texts map[string]string
		files map[string]workflow.File
		field string
		says  string
	}{
		{"empty request", map[string]string{"request": "   "}, nil, "request", "required"},
		{"10 MB logo", map[string]string{"request": "a site"}, map[string]workflow.File{"logo": {Name: "logo.png", Data: big}}, "logo", "over the 5.0 MB limit"},
		{"not an image", map[string]string{"request": "a site"}, map[string]workflow.File{"logo": {Name: "logo.png", Data: []byte("just text, not pixels")}}, "logo", "not a PNG, JPEG or GIF"},
		{"wrong extension", map[string]string{"request": "a site"}, map[string]workflow.File{"logo": {Name: "logo.pdf", Data: pagegen.DemoLogo()}}, "logo", ".pdf"},
	} {
		err := start(tc.texts, tc.files)
		var fe workflow.FieldErrors
		if !errors.As(err, &fe) || !strings.Contains(fe[tc.field], tc.says) {
			t.Errorf("%s: got %v, want a field error on %s saying %q", tc.name, err, tc.field, tc.says)
		}
	}
	v, err := def.Start.ParseForm(map[string]string{"request": "A site for Brewly coffee. Use green.", "aesthetic": "true"},
		map[string]workflow.File{"logo": {Name: "brand.png", Data: pagegen.DemoLogo()}})
	if err != nil {
		t.Fatal(err)
	}
	st, err := def.Start.Start(ctx, workflow.StartRequest{TenantID: "t"}, v)
	if err != nil {
		t.Fatal(err)
	}
	if err := def.CheckInput(st.Input); err != nil {
		t.Fatalf("the start's input fails its own check: %v", err)
	}
	var in struct {
		UserInput string          `json:"user_input"`
		Aesthetic bool            `json:"aesthetic_enabled"`
		Assets    []pagegen.Asset `json:"assets"`
	}
	if err := json.Unmarshal(st.Input, &in); err != nil || in.UserInput == "" || !in.Aesthetic || len(in.Assets) != 1 || in.Assets[0].ContentType != "image/png" {
		t.Fatalf("input %s (%v)", st.Input, err)
	}
	if st.Subject != "A site for Brewly coffee. Use green." {
		t.Errorf("subject %q", st.Subject)
	}
}

func TestDecideFeedback(t *testing.T) {
	t.Parallel()
	def := definition(t)
	ctx := context.Background()
	rv := workflow.Review{Interrupt: graph.PendingInterrupt{Node: pagegen.NodeRefineGate, Value: json.RawMessage(`{"type":"need_user_feedback","round":1}`)}}
	str := func(s string) json.RawMessage { b, _ := json.Marshal(s); return b }
	d, err := def.Review.Decide(ctx, rv, workflow.Answer{Decision: pagegen.DecisionRefine, Values: map[string]json.RawMessage{"feedback": str("use green")}})
	if err != nil || d.Resume.(pagegen.ResumeValue).UserFeedback != "use green" {
		t.Fatalf("refine: %+v %v", d, err)
	}
	d, err = def.Review.Decide(ctx, rv, workflow.Answer{Decision: pagegen.DecisionNoChanges})
	if err != nil || d.Resume.(pagegen.ResumeValue).UserFeedback != pagegen.NoChanges || !pagegen.IsNoChange(pagegen.NoChanges) {
		t.Fatalf("no changes: %+v %v", d, err)
	}
	for name, a := range map[string]workflow.Answer{
		"50 KB":         {Decision: pagegen.DecisionRefine, Values: map[string]json.RawMessage{"feedback": str(strings.Repeat("bigger headings ", 50<<10/16))}},
		"empty":         {Decision: pagegen.DecisionRefine, Values: map[string]json.RawMessage{"feedback": str(" ")}},
		"not a string":  {Decision: pagegen.DecisionRefine, Values: map[string]json.RawMessage{"feedback": json.RawMessage(`3`)}},
		"unknown field": {Decision: pagegen.DecisionRefine, Values: map[string]json.RawMessage{"colour": str("red")}},
		"bad decision":  {Decision: "approve"},
	} {
		var ae *workflow.AnswerError
		if _, err := def.Review.Decide(ctx, rv, a); !errors.As(err, &ae) || ae.Message == "" {
			t.Errorf("%s: got %v, want an answer error", name, err)
		}
	}
}

func TestViewsOfABuiltSession(t *testing.T) {
	t.Parallel()
	b := setup(t)
	d := pagegen.Demos()[0]
	res, err := pagegen.Start(b.ctx, b.g, d.Session, d.Request)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(res.State)
	th := workflow.Thread{State: raw, Interrupts: res.Interrupts, Next: res.Next}
	panel, err := pagegen.Panel(b.ctx, th, true)
	if err != nil {
		t.Fatal(err)
	}
	text := blocksText(panel)
	for _, want := range []string{"Waiting for your feedback (round 1)", "refine_waiting", "Aesthetic score", "offline", "Brewly"} {
		if !strings.Contains(text, want) {
			t.Errorf("the waiting panel lacks %q:\n%s", want, text)
		}
	}
	if rep, _ := pagegen.Report(b.ctx, th); rep != nil {
		t.Errorf("a report before the build: %v", rep)
	}
	state := runDemo(t, setup(t), d)
	raw, _ = json.Marshal(state)
	rep, err := pagegen.Report(b.ctx, workflow.Thread{State: raw})
	if err != nil {
		t.Fatal(err)
	}
	previews, zip := 0, false
	for _, bl := range rep {
		switch v := bl.(type) {
		case workflow.PagePreview:
			previews++
			if !strings.HasPrefix(v.Key, "pages/") {
				t.Errorf("preview of %q", v.Key)
			}
		case workflow.Downloads:
			zip = len(v.Items) == 1 && v.Items[0].Key == "site.zip"
		}
	}
	if previews != len(state.BuildArtifacts.Pages) || previews < 4 || !zip {
		t.Errorf("report: %d previews of %d pages, zip %v", previews, len(state.BuildArtifacts.Pages), zip)
	}
	panel, _ = pagegen.Panel(b.ctx, workflow.Thread{State: raw}, true)
	if text := blocksText(panel); !strings.Contains(text, "Rounds of feedback") || !strings.Contains(text, d.Feedback) {
		t.Errorf("the built panel lacks the round:\n%s", text)
	}
}

func TestEventNames(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		ev   graph.Event
		want string
	}{
		{graph.Event{Kind: graph.KindCustom, Node: "brief", Data: pagegen.NodeStart{Started: "brief"}}, "brief_start"},
		{graph.Event{Kind: graph.KindCustom, Node: "render", Data: json.RawMessage(`{"started":"render"}`)}, "build_start"},
		{graph.Event{Kind: graph.KindCheckpoint, Data: graph.CheckpointSummary{Nodes: []string{"brief"}, Next: []string{"style_extractor"}}}, "brief_complete"},
		{graph.Event{Kind: graph.KindCheckpoint, Data: json.RawMessage(`{"nodes":["style_extractor"],"next":["component_registry"]}`)}, "style_extracted"},
		{graph.Event{Kind: graph.KindCheckpoint, Data: graph.CheckpointSummary{Nodes: []string{"refine"}, Next: []string{"render"}}}, "refine_complete"},
		{graph.Event{Kind: graph.KindCheckpoint, Data: graph.CheckpointSummary{Nodes: []string{"render"}}}, "build_complete"},
		{graph.Event{Kind: graph.KindCustom, Node: "render", Data: pagegen.Progress{Stage: "build", Page: "home", Index: 1, Total: 4}}, "build_progress"},
		{graph.Event{Kind: graph.KindInterrupt, Node: "refine_gate", Data: graph.PendingInterrupt{ID: "i", Node: "refine_gate",
			Value: json.RawMessage(`{"type":"need_user_feedback"}`)}}, "refine_waiting"},
	} {
		got, ok := pagegen.EventName(tc.ev)
		if !ok || got != tc.want {
			t.Errorf("%s %v: got %q %v, want %q", tc.ev.Kind, tc.ev.Data, got, ok, tc.want)
		}
	}
	for _, ev := range []graph.Event{{Kind: graph.KindCheckpoint, Data: graph.CheckpointSummary{Nodes: []string{"aesthetic_scorer"}, Next: []string{"refine_gate"}}},
		{Kind: graph.KindCheckpoint, Data: graph.CheckpointSummary{Source: "input", Next: []string{"brief"}}},
		{Kind: graph.KindTaskStart, Node: "brief", Data: graph.TaskStart{Node: "brief"}}} {
		if name, ok := pagegen.EventName(ev); ok {
			t.Errorf("%s %v is named %q; §7.2 has no event for it here", ev.Kind, ev.Data, name)
		}
	}
}

// blocksText flattens blocks to their words.
func blocksText(bs []workflow.Block) string {
	b, _ := json.Marshal(bs)
	return string(b)
}
