// Package terminal runs a registered workflow in a terminal (weft run): it asks for the
// start form's fields, streams the run's progress as text, asks an interrupt's review at the
// prompt, writes the run's artifacts to a folder, and resumes a thread by its id from a
// checkpointer that outlives the process. It knows workflows only through the plug-in
// contract (internal/workflow); it imports internal/graph, internal/workflow and the
// standard library.
package terminal

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"weft/internal/graph"
	"weft/internal/workflow"
)

// ErrNotResumable refuses --thread on a store that keeps nothing after the process ends.
var ErrNotResumable = errors.New("not resumable")

// Config is one weft run.
type Config struct {
	Registry *workflow.Registry
	Workflow string
	// Thread resumes that thread ("" starts a new one).
	Thread string
	// Store names the checkpointer in messages ("sqlite:weft.db", "memory", a database).
	Store string
	// Durable: the store outlives the process, so a thread can be resumed later.
	Durable bool
	// Input, when set, is the start form's fields as JSON (as the API takes them); without it
	// the fields are asked for at the prompt.
	Input json.RawMessage
	// Resume is the command that resumes a thread, for messages ("weft run NAME --thread").
	Resume string
	// ArtifactDir is the folder the run's artifacts are written to (a Dir), for messages.
	ArtifactDir string
	In          io.Reader
	Out         io.Writer
	Now         func() time.Time
}

// session is one weft run's state.
type session struct {
	cfg    Config
	def    workflow.Definition
	thread string
	lines  <-chan string
	ctx    context.Context
}

// Run runs cfg.Workflow in the terminal until its thread ends (and no follow-up is asked
// for), the input runs out, or ctx ends (Ctrl-C: the thread can be resumed with --thread).
func Run(ctx context.Context, cfg Config) error {
	def, ok := cfg.Registry.Get(cfg.Workflow)
	if !ok {
		var names []string
		for _, d := range cfg.Registry.All() {
			names = append(names, d.Name)
		}
		return fmt.Errorf("no workflow named %q here: weft run takes %s", cfg.Workflow, strings.Join(names, ", "))
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &session{cfg: cfg, def: def, thread: cfg.Thread, lines: readLines(ctx, cfg.In), ctx: ctx}
	var cmd *graph.Command
	if cfg.Thread != "" {
		if !cfg.Durable {
			return fmt.Errorf("%w: thread %s cannot be resumed: the %s store keeps nothing after its process ends, so this thread was not saved. "+
				"Run with --store sqlite:PATH or a PostgreSQL URL to resume threads", ErrNotResumable, cfg.Thread, cfg.Store)
		}
		snap, err := def.Graph.StateJSON(ctx, graph.Config{ThreadID: cfg.Thread})
		if errors.Is(err, graph.ErrNotFound) {
			return fmt.Errorf("there is no thread %s in %s", cfg.Thread, cfg.Store)
		}
		if err != nil {
			return err
		}
		s.printf("== resuming thread %s of %s (step %d, next %v)\n", cfg.Thread, def.Title, snap.Checkpoint.Step, snap.Next)
		if len(snap.Next) > 0 && len(snap.Interrupts) == 0 {
			cmd = &graph.Command{} // stopped mid-run: go on from the last checkpoint
		}
	} else {
		in, err := s.startInput()
		if err != nil || in == nil {
			return err
		}
		cmd = in
	}
	for {
		if cmd != nil {
			if err := s.run(*cmd); err != nil {
				return err
			}
		}
		next, err := s.next()
		if err != nil || next == nil {
			return err
		}
		cmd = next
	}
}

// startInput asks for the start form (or takes --input) and returns the run's first command
// on a new thread (nil: the input ran out).
func (s *session) startInput() (*graph.Command, error) {
	def := s.def
	var st workflow.Start
	switch {
	case def.Start != nil:
		var v workflow.Values
		var err error
		if len(s.cfg.Input) > 0 {
			v, err = def.Start.ParseJSON(s.cfg.Input)
		} else {
			v, err = s.askFields(def.Start, false)
		}
		if err != nil || v == nil {
			return nil, err
		}
		if def.Start.Start != nil {
			if st, err = def.Start.Start(s.ctx, workflow.StartRequest{TenantID: "terminal", Actor: "cli"}, v); err != nil {
				return nil, err
			}
		} else if st.Input, err = json.Marshal(v); err != nil {
			return nil, err
		}
	default:
		st.Input = s.cfg.Input
		if len(st.Input) == 0 {
			line, ok := s.ask(fmt.Sprintf("Input (JSON; empty: the example %s)", def.ExampleInput))
			if !ok {
				return nil, nil
			}
			st.Input = json.RawMessage(strings.TrimSpace(line))
			if len(st.Input) == 0 {
				st.Input = def.ExampleInput
			}
		}
	}
	if def.CheckInput != nil {
		if err := def.CheckInput(st.Input); err != nil {
			return nil, err
		}
	}
	ws, err := def.Graph.InputWrites(st.Input)
	if err != nil {
		return nil, err
	}
	s.thread = st.ThreadID
	if s.thread == "" {
		s.thread = newThreadID(def.Name)
	}
	s.printf("== %s, thread %s (store %s)\n", def.Title, s.thread, s.cfg.Store)
	if s.cfg.Durable {
		s.printf("   stop with Ctrl-C at any time; resume with: %s --thread %s\n", s.cfg.Resume, s.thread)
	}
	return &graph.Command{Update: ws}, nil
}

// run runs the thread with cmd, streaming its progress.
func (s *session) run(cmd graph.Command) error {
	_, err := s.def.Graph.Run(s.ctx, graph.Config{ThreadID: s.thread}, cmd, graph.ModeTasks|graph.ModeCustom|graph.ModeCheckpoints,
		func(ev graph.Event) bool {
			if line := s.describe(ev); line != "" {
				s.printf("%s\n", line)
			}
			return true
		})
	if err != nil && s.ctx.Err() != nil {
		s.stopped()
		return s.ctx.Err()
	}
	return err
}

// stopped says how to go on after Ctrl-C or the end of the input.
func (s *session) stopped() {
	if s.cfg.Durable {
		s.printf("\n== stopped. Resume with: %s --thread %s\n", s.cfg.Resume, s.thread)
	} else {
		s.printf("\n== stopped. The %s store kept nothing: this thread cannot be resumed.\n", s.cfg.Store)
	}
}

// next decides what follows a run: a pause's review, the report and a follow-up, or the end
// (nil).
func (s *session) next() (*graph.Command, error) {
	snap, err := s.def.Graph.StateJSON(s.ctx, graph.Config{ThreadID: s.thread})
	if err != nil {
		return nil, err
	}
	t := workflow.Thread{TenantID: "terminal", ThreadID: s.thread, State: snap.Values, CheckpointID: snap.Checkpoint.ID, Next: snap.Next,
		Interrupts: snap.Interrupts, Reader: workflow.Person{ID: "cli", Name: "you", Role: "admin"}, Now: s.cfg.Now()}
	if len(snap.Interrupts) > 0 {
		return s.review(t, snap.Interrupts[0])
	}
	if len(snap.Next) > 0 {
		for _, task := range snap.Tasks {
			if task.Error != "" {
				return nil, fmt.Errorf("%s failed: %s (resume with: %s --thread %s)", task.Node, task.Error, s.cfg.Resume, s.thread)
			}
		}
		return &graph.Command{}, nil
	}
	s.printf("\n== %s: thread %s is done\n", s.def.Title, s.thread)
	if rep := s.def.Views.Report; rep != nil {
		blocks, err := rep(s.ctx, t)
		if err != nil {
			return nil, err
		}
		s.blocks(blocks, "")
	}
	if s.def.FollowUp == nil {
		return nil, nil
	}
	s.printf("\n== another run on this thread? (an empty answer finishes)\n")
	v, err := s.askFields(s.def.FollowUp, true)
	if err != nil || v == nil {
		return nil, err
	}
	st := workflow.Start{}
	if s.def.FollowUp.Start != nil {
		if st, err = s.def.FollowUp.Start(s.ctx, workflow.StartRequest{TenantID: "terminal", Actor: "cli", ThreadID: s.thread}, v); err != nil {
			return nil, err
		}
	} else if st.Input, err = json.Marshal(v); err != nil {
		return nil, err
	}
	ws, err := s.def.Graph.InputWrites(st.Input)
	if err != nil {
		return nil, err
	}
	return &graph.Command{Update: ws}, nil
}

// review asks the pause's review at the prompt until the workflow's Decide takes the answer,
// and returns the command that goes on (nil: the input ran out).
func (s *session) review(t workflow.Thread, it graph.PendingInterrupt) (*graph.Command, error) {
	rv := workflow.Review{Thread: t, Interrupt: it}
	reviewer := s.def.Reviewer()
	form, err := reviewer.Form(s.ctx, rv)
	if err != nil {
		return nil, err
	}
	s.printf("\n== %s paused the thread: it waits for your answer\n", it.Node)
	s.blocks(form.Blocks, "")
	choices := form.Choices
	if len(choices) == 0 {
		choices = []workflow.Choice{{Value: workflow.Approve, Label: "Approve"}, {Value: workflow.Reject, Label: "Reject"}}
	}
	for {
		a := workflow.Answer{FromForm: true, Values: map[string]json.RawMessage{}}
		for _, in := range form.Inputs {
			if ok := s.askInput(in, a.Values); !ok {
				s.stopped()
				return nil, nil
			}
		}
		var opts []string
		for i, c := range choices {
			opts = append(opts, fmt.Sprintf("[%d] %s", i+1, c.Label))
		}
		line, ok := s.ask("Answer: " + strings.Join(opts, "  "))
		if !ok {
			s.stopped()
			return nil, nil
		}
		a.Decision = pickChoice(choices, line)
		if a.Decision == "" {
			s.printf("   choose 1–%d\n", len(choices))
			continue
		}
		if a.Comment, ok = s.ask("Comment (optional)"); !ok {
			s.stopped()
			return nil, nil
		}
		d, err := reviewer.Decide(s.ctx, rv, a)
		var ae *workflow.AnswerError
		if errors.As(err, &ae) {
			s.printf("   not taken: %s\n", ae.Error())
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, kv := range d.Summary {
			s.printf("   %s: %s\n", kv.Key, kv.Value)
		}
		if len(d.Update) > 0 {
			vals := map[string]any{}
			for _, w := range d.Update {
				vals[w.Channel] = w.Value
			}
			b, err := json.Marshal(vals)
			if err != nil {
				return nil, err
			}
			if _, err := s.def.Graph.UpdateStateJSON(s.ctx, graph.Config{ThreadID: s.thread}, b, d.AsNode); err != nil {
				return nil, err
			}
		}
		return &graph.Command{Resume: graph.ResumeMap{it.ID: d.Resume}}, nil
	}
}

func pickChoice(choices []workflow.Choice, line string) string {
	line = strings.TrimSpace(line)
	for i, c := range choices {
		if line == fmt.Sprint(i+1) || strings.EqualFold(line, c.Value) {
			return c.Value
		}
	}
	return ""
}

// askFields asks a form's fields at the prompt (nil values: the input ran out, or, when
// optional, every answer was empty); a refused field is asked again.
func (s *session) askFields(f *workflow.StartForm, optional bool) (workflow.Values, error) {
	for {
		texts, files := map[string]string{}, map[string]workflow.File{}
		answered := false
		for _, fd := range f.Fields {
			q := fd.Label
			switch fd.Kind {
			case workflow.Bool:
				q += " [y/n, default " + map[bool]string{true: "y", false: "n"}[fd.Default == "true"] + "]"
			case workflow.Upload:
				q += " (a file's path; empty: none)"
			case workflow.Select:
				var vs []string
				for _, o := range fd.Options {
					vs = append(vs, o.Value)
				}
				q += " (" + strings.Join(vs, " | ") + ")"
			}
			if fd.Default != "" && fd.Kind != workflow.Bool {
				q += " [" + fd.Default + "]"
			}
			line, ok := s.ask(q)
			if !ok {
				return nil, nil
			}
			line = strings.TrimSpace(line)
			answered = answered || line != ""
			switch fd.Kind {
			case workflow.Bool:
				yes := fd.Default == "true"
				if line != "" {
					yes = strings.HasPrefix(strings.ToLower(line), "y")
				}
				if yes {
					texts[fd.Name] = "true"
				}
			case workflow.Upload:
				if line != "" {
					data, err := readFile(line, fd.MaxBytes)
					if err != nil {
						s.printf("   %s: %v\n", fd.Name, err)
						continue
					}
					files[fd.Name] = workflow.File{Name: line, Data: data}
				}
			default:
				if line == "" {
					line = fd.Default
				}
				texts[fd.Name] = line
			}
		}
		if optional && !answered {
			return nil, nil
		}
		v, err := f.ParseForm(texts, files)
		var fe workflow.FieldErrors
		if errors.As(err, &fe) {
			s.printf("   not taken: %s\n", fe.Error())
			continue
		}
		return v, err
	}
}

// askInput asks one review input, into values as a form sends it (texts as JSON strings).
func (s *session) askInput(b workflow.Block, values map[string]json.RawMessage) bool {
	str := func(v string) json.RawMessage { j, _ := json.Marshal(v); return j }
	switch in := b.(type) {
	case workflow.TextBox:
		line, ok := s.ask(in.Label)
		values[in.Name] = str(line)
		return ok
	case workflow.ScoreField:
		line, ok := s.ask(fmt.Sprintf("%s (%g–%g) [%s]", in.Label, in.Min, in.Max, in.Value))
		if strings.TrimSpace(line) == "" {
			line = in.Value
		}
		values[in.Name] = str(line)
		return ok
	case workflow.ItemDecisions:
		items := map[string]map[string]string{}
		for _, it := range in.Items {
			s.printf("   %s\n", it.Title)
			s.blocks(it.Blocks, "     ")
			d, ok := s.ask("   approve or reject")
			if !ok {
				return false
			}
			fb, ok := s.ask("   " + in.FeedbackLabel)
			if !ok {
				return false
			}
			items[it.ID] = map[string]string{"decision": strings.TrimSpace(d), "feedback": fb}
		}
		j, _ := json.Marshal(items)
		values[in.Name] = j
	}
	return true
}

// ask prints a question and reads one line (false: the input ended or ctx did).
func (s *session) ask(q string) (string, bool) {
	s.printf("? %s: ", q)
	select {
	case line, ok := <-s.lines:
		if !ok {
			s.printf("\n")
		}
		return line, ok
	case <-s.ctx.Done():
		return "", false
	}
}

func (s *session) printf(format string, args ...any) { fmt.Fprintf(s.cfg.Out, format, args...) }

// readLines reads r's lines in the background (so a prompt gives way to Ctrl-C).
func readLines(ctx context.Context, r io.Reader) <-chan string {
	ch := make(chan string)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			select {
			case ch <- sc.Text():
			case <-ctx.Done():
				return
			}
		}
	}()
	return ch
}

func newThreadID(name string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return strings.ReplaceAll(name, "_", "-") + "-" + hex.EncodeToString(b)
}
