package graph

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"
	"strings"
)

// Builder assembles a graph over state type S. Errors are collected and
// reported together by Compile.
type Builder[S any] struct {
	schema   *schema
	problems []string
	nodes    map[string]*node[S]
	order    []string
	edges    map[string][]string // static edges: source -> targets
	joins    []*join
	branches map[string][]*branch[S]
	reducers map[string]Reducer
}

type node[S any] struct {
	name         string
	fn           NodeFunc[S]
	retry        *RetryPolicy
	cache        *CachePolicy[S]
	destinations []string
	writes       map[string]bool
}

type join struct {
	key     string
	sources []string
	to      string
}

type branch[S any] struct {
	from   string
	router Router[S]
	paths  map[string]string // key -> node
}

// NodeOption configures a node.
type NodeOption[S any] func(*node[S])

// WithRetry gives a node a retry policy.
func WithRetry[S any](p RetryPolicy) NodeOption[S] {
	return func(n *node[S]) { p = p.withDefaults(); n.retry = &p }
}

// WithCache gives a node a cache policy (the graph also needs WithCacheStore).
func WithCache[S any](p CachePolicy[S]) NodeOption[S] {
	return func(n *node[S]) { n.cache = &p }
}

// WithDestinations declares where a node may route with Command.Goto, for
// Compile's reachability checks and for drawing.
func WithDestinations[S any](nodes ...string) NodeOption[S] {
	return func(n *node[S]) { n.destinations = append(n.destinations, nodes...) }
}

// WithWrites declares the channels a node writes: Compile checks the names
// and a run rejects writes to any other channel.
func WithWrites[S any](channels ...string) NodeOption[S] {
	return func(n *node[S]) {
		if n.writes == nil {
			n.writes = map[string]bool{}
		}
		for _, c := range channels {
			n.writes[c] = true
		}
	}
}

// New starts a graph over state type S.
func New[S any]() *Builder[S] {
	sch, problems := newSchema(reflect.TypeFor[S]())
	return &Builder[S]{schema: sch, problems: problems, nodes: map[string]*node[S]{},
		edges: map[string][]string{}, branches: map[string][]*branch[S]{}, reducers: map[string]Reducer{}}
}

func (b *Builder[S]) fail(format string, args ...any) {
	b.problems = append(b.problems, fmt.Sprintf(format, args...))
}

// AddNode adds a node.
func (b *Builder[S]) AddNode(name string, fn NodeFunc[S], opts ...NodeOption[S]) *Builder[S] {
	switch {
	case name == "" || name == START || name == END:
		b.fail("node name %q is reserved or empty", name)
		return b
	case strings.ContainsAny(name, "|:/"):
		b.fail("node name %q may not contain '|', ':' or '/'", name)
		return b
	case b.nodes[name] != nil:
		b.fail("node %q added twice", name)
		return b
	case fn == nil:
		b.fail("node %q has a nil function", name)
		return b
	}
	n := &node[S]{name: name, fn: fn}
	for _, o := range opts {
		o(n)
	}
	b.nodes[name] = n
	b.order = append(b.order, name)
	return b
}

// AddEdge adds a static edge: when from finishes, to runs in the next step.
func (b *Builder[S]) AddEdge(from, to string) *Builder[S] {
	if from == END {
		b.fail("edge from END to %q: END has no way out", to)
	}
	if to == START {
		b.fail("edge from %q to START: START takes no edges in", from)
	}
	b.edges[from] = append(b.edges[from], to)
	return b
}

// AddJoin adds a join (LangGraph's add_edge([a, b], c)): to runs once every
// source has finished, in whichever steps they finished.
func (b *Builder[S]) AddJoin(sources []string, to string) *Builder[S] {
	if len(sources) == 0 {
		b.fail("join to %q has no sources", to)
		return b
	}
	srcs := slices.Clone(sources)
	sort.Strings(srcs)
	b.joins = append(b.joins, &join{key: "join:" + strings.Join(srcs, "+") + ":" + to, sources: srcs, to: to})
	return b
}

// AddConditionalEdges routes from a node through router; the router's keys
// are looked up in paths (key -> node). Every possible destination, including
// Send targets, must be a value of paths.
func (b *Builder[S]) AddConditionalEdges(from string, router Router[S], paths map[string]string) *Builder[S] {
	if router == nil {
		b.fail("conditional edges from %q: nil router", from)
		return b
	}
	if len(paths) == 0 {
		b.fail("conditional edges from %q: empty path map", from)
		return b
	}
	b.branches[from] = append(b.branches[from], &branch[S]{from: from, router: router, paths: paths})
	return b
}

// Reducer sets a custom reducer for a channel.
func (b *Builder[S]) Reducer(channel string, r Reducer) *Builder[S] {
	b.reducers[channel] = r
	return b
}

// CompileOption configures a compiled graph.
type CompileOption func(*compileConfig)

type compileConfig struct {
	checkpointer    Checkpointer
	interruptBefore []string
	interruptAfter  []string
	recursionLimit  int
	maxConcurrency  int
	cache           Cache
	clock           Clock
	rand            func() float64
	name            string
	errorNode       string
	errorRecord     func(NodeFailure, error) []Write
	guard           func(before, after any) error
	durability      Durability
}

// WithGuard checks every change of state (a run's input, each step's writes,
// UpdateState) before it is saved: guard gets the state before and after,
// as values of the state type, and a non-nil error rejects the change (the
// run or the update fails with it). Use it for fields that must never change
// once set.
func WithGuard(guard func(before, after any) error) CompileOption {
	return func(cc *compileConfig) { cc.guard = guard }
}

// WithCheckpointer saves a checkpoint after every superstep.
func WithCheckpointer(c Checkpointer) CompileOption {
	return func(cc *compileConfig) { cc.checkpointer = c }
}

// WithInterruptBefore pauses before the named nodes run.
func WithInterruptBefore(nodes ...string) CompileOption {
	return func(cc *compileConfig) { cc.interruptBefore = append(cc.interruptBefore, nodes...) }
}

// WithInterruptAfter pauses after the named nodes ran.
func WithInterruptAfter(nodes ...string) CompileOption {
	return func(cc *compileConfig) { cc.interruptAfter = append(cc.interruptAfter, nodes...) }
}

// DefaultRecursionLimit is LangGraph's default superstep limit.
const DefaultRecursionLimit = 25

// WithRecursionLimit caps the supersteps of one run.
func WithRecursionLimit(n int) CompileOption {
	return func(cc *compileConfig) { cc.recursionLimit = n }
}

// WithMaxConcurrency bounds the tasks run in parallel within a step
// (default 16).
func WithMaxConcurrency(n int) CompileOption {
	return func(cc *compileConfig) { cc.maxConcurrency = n }
}

// WithCacheStore is where cached node writes live.
func WithCacheStore(c Cache) CompileOption { return func(cc *compileConfig) { cc.cache = c } }

// WithClock injects time (retry sleeps, cache expiry, checkpoint times).
func WithClock(c Clock) CompileOption { return func(cc *compileConfig) { cc.clock = c } }

// WithRand injects the random source for retry jitter: a function returning
// values in [0, 1).
func WithRand(f func() float64) CompileOption { return func(cc *compileConfig) { cc.rand = f } }

// NodeFailure describes a node that failed after its retry policy, as handed
// to an error handler.
type NodeFailure struct {
	Node     string `json:"node"`
	TaskID   string `json:"task_id"`
	Attempts int    `json:"attempts"`
	Error    string `json:"error"`
	Step     int    `json:"step"`
	// CheckpointID is the checkpoint the failed step started from: running
	// the thread from it (a fork) retries the failed node.
	CheckpointID string `json:"checkpoint_id"`
}

// WithErrorHandler routes any node failure (after the node's retry policy,
// never for interrupts or cancellation) to the handler node instead of
// failing the run: record turns the failure and the original error into
// writes (for example a classified entry in an errors channel), those writes
// are applied with the step's other writes, the failed node's own edges do
// not fire, and the handler runs next. A failure of the handler itself, or
// of a node it leads to that fails again, fails the run as usual.
func WithErrorHandler(node string, record func(f NodeFailure, err error) []Write) CompileOption {
	return func(cc *compileConfig) { cc.errorNode, cc.errorRecord = node, record }
}

// WithName names the graph (used in drawings and events).
func WithName(name string) CompileOption { return func(cc *compileConfig) { cc.name = name } }

// Compile checks the graph and returns a runnable one.
func (b *Builder[S]) Compile(opts ...CompileOption) (*Graph[S], error) {
	cfg := compileConfig{recursionLimit: DefaultRecursionLimit, maxConcurrency: 16, clock: RealClock, rand: rand.Float64}
	for _, o := range opts {
		o(&cfg)
	}
	problems := slices.Clone(b.problems)
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	known := func(n string) bool { return n == END || b.nodes[n] != nil }

	for ch, r := range b.reducers {
		c := b.schema.byName[ch]
		if c == nil {
			add("reducer for unknown channel %q", ch)
			continue
		}
		c.reducer, c.kind, c.custom = r, kindCustom, false
	}
	for _, c := range b.schema.channels {
		if c.custom {
			add("channel %q is tagged custom but has no Builder.Reducer", c.name)
		}
	}
	for _, n := range b.nodes {
		for w := range n.writes {
			if b.schema.byName[w] == nil {
				add("node %q declares a write to unknown channel %q", n.name, w)
			}
		}
		for _, d := range n.destinations {
			if !known(d) {
				add("node %q declares unknown destination %q", n.name, d)
			}
		}
	}
	// Edges and their endpoints.
	succ := map[string][]string{}
	for from, tos := range b.edges {
		if from != START && b.nodes[from] == nil {
			add("edge from unknown node %q", from)
		}
		for _, to := range tos {
			if !known(to) {
				add("edge from %q to unknown node %q", from, to)
			}
			succ[from] = append(succ[from], to)
		}
	}
	for _, j := range b.joins {
		for _, s := range j.sources {
			if b.nodes[s] == nil && s != START {
				add("join to %q from unknown node %q", j.to, s)
			}
			succ[s] = append(succ[s], j.to)
		}
		if !known(j.to) {
			add("join to unknown node %q", j.to)
		}
	}
	for from, brs := range b.branches {
		if from != START && b.nodes[from] == nil {
			add("conditional edges from unknown node %q", from)
		}
		for _, br := range brs {
			keys := make([]string, 0, len(br.paths))
			for k := range br.paths {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				to := br.paths[k]
				if !known(to) {
					add("conditional edge from %q: path %q goes to unknown node %q", from, k, to)
				}
				succ[from] = append(succ[from], to)
			}
		}
	}
	for _, n := range b.nodes {
		succ[n.name] = append(succ[n.name], n.destinations...)
	}
	if len(succ[START]) == 0 {
		add("no edge from START: add an entry point")
	}
	if cfg.errorNode != "" {
		if b.nodes[cfg.errorNode] == nil {
			add("error handler %q is not a node", cfg.errorNode)
		} else {
			succ[START] = append(succ[START], cfg.errorNode) // any node may fail into it
		}
	}
	// Reachability from START.
	seen := map[string]bool{START: true}
	queue := []string{START}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		for _, m := range succ[n] {
			if !seen[m] {
				seen[m] = true
				queue = append(queue, m)
			}
		}
	}
	for _, name := range b.order {
		if !seen[name] {
			add("node %q is unreachable from START", name)
		}
		if len(succ[name]) == 0 {
			add("node %q has no way out: add an edge to END or another node", name)
		}
	}
	for _, n := range append(slices.Clone(cfg.interruptBefore), cfg.interruptAfter...) {
		if b.nodes[n] == nil {
			add("interrupt on unknown node %q", n)
		}
	}
	if cfg.recursionLimit <= 0 {
		add("recursion limit must be positive")
	}
	for _, n := range b.nodes {
		if n.cache != nil && cfg.cache == nil {
			add("node %q has a cache policy but the graph has no cache store (WithCacheStore)", n.name)
		}
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return nil, &CompileError{Problems: problems}
	}

	g := &Graph[S]{
		schema: b.schema, nodes: b.nodes, order: slices.Clone(b.order), edges: b.edges, joins: b.joins,
		branches: b.branches, cfg: cfg,
		before: map[string]bool{}, after: map[string]bool{}, joinsFrom: map[string][]*join{},
	}
	for _, n := range cfg.interruptBefore {
		g.before[n] = true
	}
	for _, n := range cfg.interruptAfter {
		g.after[n] = true
	}
	for _, j := range b.joins {
		for _, s := range j.sources {
			g.joinsFrom[s] = append(g.joinsFrom[s], j)
		}
	}
	if cfg.maxConcurrency <= 0 {
		g.cfg.maxConcurrency = 1
	}
	g.onErrorRoute = map[string]bool{}
	for _, n := range g.ErrorRoute() {
		g.onErrorRoute[n] = true
	}
	return g, nil
}

// Graph is a compiled, runnable graph. It is safe for concurrent use by any
// number of runs (on different threads).
type Graph[S any] struct {
	schema    *schema
	nodes     map[string]*node[S]
	order     []string
	edges     map[string][]string
	joins     []*join
	joinsFrom map[string][]*join
	branches  map[string][]*branch[S]
	before    map[string]bool
	after     map[string]bool
	cfg       compileConfig

	onErrorRoute map[string]bool
}

// Nodes lists the graph's node names in the order they were added.
func (g *Graph[S]) Nodes() []string { return slices.Clone(g.order) }

// Checkpointer returns the graph's checkpointer (nil if none).
func (g *Graph[S]) Checkpointer() Checkpointer { return g.cfg.checkpointer }
