package graph_test

import (
	"context"
	"strings"
	"testing"

	"weft/internal/graph"
)

type keyState struct {
	Question string   `json:"question"`
	Log      []string `json:"log" weft:"append"`
	Count    int
}

var (
	question = graph.KeyOf[keyState, string]("question")
	logKey   = graph.KeyOf[keyState, []string]("log")
	count    = graph.KeyOf[keyState, int]("Count")
)

func TestKeyOfChecksNameAndType(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		make func()
		want string
	}{
		{"misspelt", func() { graph.KeyOf[keyState, string]("questoin") }, `no channel "questoin"`},
		{"wrong type", func() { graph.KeyOf[keyState, int]("question") }, "holds string, not int"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				r := recover()
				if r == nil || !strings.Contains(r.(string), tc.want) {
					t.Fatalf("panic = %v, want one saying %q", r, tc.want)
				}
			}()
			tc.make()
		})
	}
}

func TestKeysWriteAndTaskInfo(t *testing.T) {
	t.Parallel()
	var seen graph.TaskInfo
	g, err := graph.New[keyState]().
		AddNode("a", func(ctx context.Context, s keyState) (graph.Command, error) {
			seen, _ = graph.CurrentTask(ctx)
			return graph.Update(question.Set(s.Question+"!"), logKey.Set([]string{"a"}), count.Set(s.Count+1)), nil
		}).
		AddEdge(graph.START, "a").AddEdge("a", graph.END).Compile()
	if err != nil {
		t.Fatal(err)
	}
	res, err := g.Invoke(context.Background(), graph.Config{ThreadID: "t1"}, graph.Update(question.Set("why"), logKey.Set([]string{"in"})))
	if err != nil {
		t.Fatal(err)
	}
	if res.State.Question != "why!" || strings.Join(res.State.Log, ",") != "in,a" || res.State.Count != 1 {
		t.Fatalf("state = %+v", res.State)
	}
	if seen.Node != "a" || seen.ThreadID != "t1" || seen.TaskID == "" {
		t.Fatalf("task info = %+v", seen)
	}
	if _, ok := graph.CurrentTask(context.Background()); ok {
		t.Fatal("CurrentTask outside a node reported a task")
	}
}
