package workflow

// The view vocabulary: a small, closed set of blocks that the console's generic templ
// components render (web/component). A workflow's review forms and views are lists of
// blocks, built from its state, so they are data: unit-tested without a browser. Text in a
// block is plain text; the renderer escapes it.

// Block is one piece of a view. The set is closed: only this package's types implement it.
type Block interface{ block() }

// Heading is a section title (Level 2 or 3).
type Heading struct {
	Text  string
	Level int
}

// Paragraph is plain text; Muted shows it as a note.
type Paragraph struct {
	Text  string
	Muted bool
}

// KV is one row of a key/value list. Badge, when set, shows Value as a badge of that
// class (a status word); Code shows it in monospace; Href links it.
type KV struct {
	Key, Value string
	Badge      string
	Code       bool
	Href       string
}

// KeyValues is a key/value list.
type KeyValues struct{ Items []KV }

// Column types of a table.
const (
	ColText   = "text"
	ColNumber = "number" // right-aligned, tabular figures
	ColBadge  = "badge"  // the cell's Badge class around its text
	ColCode   = "code"   // monospace
	ColWide   = "wide"   // text that takes the room (descriptions)
)

// Column is a table column.
type Column struct {
	Title string
	Type  string
}

// Cell is one table cell: its text, optionally a link, a badge class and a muted note
// under it; Progress, a bar before the text (Done of Total: how far a list of items got);
// Badges, words in badges after it.
type Cell struct {
	Text     string
	Href     string
	Badge    string
	Note     string
	Progress *Progress
	Badges   []Badge
}

// Badge is a word in a badge of its class (a status or an outcome), with a tooltip.
type Badge struct {
	Text, Class, Title string
}

// Row is a table row; Highlight marks it (the current item, a failure).
type Row struct {
	ID        string
	Cells     []Cell
	Highlight bool
}

// Table is a table with typed columns.
type Table struct {
	Caption string
	Columns []Column
	Rows    []Row
	Empty   string // what to say when there are no rows
}

// Citation marks.
const (
	MarkCited     = "cited"     // the result rests on it
	MarkShortfall = "shortfall" // named as where something falls short
)

// Citation is a chunk of a document, with a link to its place.
type Citation struct {
	ID        string // the chunk id
	Document  string // the document's title
	Href      string // its place in the document ("" when it cannot be opened)
	Text      string
	Mark      string // MarkCited, MarkShortfall or ""
	Note      string // e.g. the rubric item it matched
	Withdrawn string // set when its document was withdrawn: who and when
}

// Citations is a list of cited chunks.
type Citations struct {
	Items []Citation
	Empty string
}

// Redline shows a change of text: Before struck where deleted, After marked where
// inserted, computed word by word (Ops) with a diff library.
type Redline struct {
	ID     string
	Title  string
	Before string
	After  string
	Note   string // why the change is proposed
}

// ScoreField is a number input for a score.
type ScoreField struct {
	Name           string
	Label, Hint    string
	Min, Max, Step float64
	Value          string
	Error          string
}

// TextBox is a text input (Rows > 1: several lines).
type TextBox struct {
	Name        string
	Label       string
	Placeholder string
	Value       string
	Rows        int
	MaxLength   int
	Required    bool
	Error       string
}

// Item decisions.
const (
	ItemApprove = "approve"
	ItemReject  = "reject"
)

// DecisionItem is one item of a per-item decision: what it is (blocks, such as its
// redline), and the reviewer's decision and feedback so far.
type DecisionItem struct {
	ID       string
	Title    string
	Blocks   []Block
	Decision string // ItemApprove, ItemReject or "" (undecided)
	Feedback string
	Error    string
}

// ItemDecisions asks for approve or reject, with feedback, for each item of a list. The
// form fields are Name + "." + item id (the decision) and Name + "." + item id +
// ".feedback".
type ItemDecisions struct {
	Name          string
	Items         []DecisionItem
	FeedbackLabel string
	ApproveAll    bool // offer an "approve all" shortcut
}

// Quote is a passage of text (a contract's clause, a document's paragraph) with spans of it
// marked: the words a finding cites, each with its class and a note. Line breaks in Text are
// kept.
type Quote struct {
	ID    string
	Title string
	Text  string
	Marks []Mark
}

// Mark is a marked span of a Quote: Text[Start:End] (byte offsets), its Class (a severity,
// SeverityCritical … SeverityLow, or MarkCited), a short Label shown after it ("R1", to tie it
// to a table row) and a Note said on hover (why it is marked).
type Mark struct {
	Start, End int
	Class      string
	Label      string
	Note       string
}

// Severities of a finding: the classes of a Mark, and of a badge.
const (
	SeverityCritical = "critical"
	SeverityHigh     = "high"
	SeverityMedium   = "medium"
	SeverityLow      = "low"
)

// Image is an image artifact of the thread.
type Image struct {
	Key, Alt, Caption string
}

// PagePreview is an HTML artifact of the thread, shown in a sandboxed frame at the given
// widths (px; default desktop and phone).
type PagePreview struct {
	Key, Title string
	Widths     []int
}

// Code is a block of code (SQL, Python) or data. Marks, when set, highlight spans of Text:
// each Mark's Class names a token kind (CodeKeyword, CodeString, …), as a real tokenizer of
// the language found them; Label and Note are not shown.
type Code struct {
	Language string
	Text     string
	Caption  string
	Marks    []Mark
}

// Token kinds of a Code block's marks.
const (
	CodeKeyword  = "kw"
	CodeString   = "str"
	CodeNumber   = "num"
	CodeComment  = "com"
	CodeFunction = "fn"
	CodeOperator = "op"
)

// Runs splits the code into plain and marked runs, as Quote.Runs does.
func (c Code) Runs() []QuoteRun { return Quote{Text: c.Text, Marks: c.Marks}.Runs() }

// PlanStep is one step of a plan.
type PlanStep struct {
	N           int
	Tool        string
	Instruction string
	Status      string // pending, running, done, failed, skipped
	Detail      string
}

// Plan is an ordered list of steps with their tool and status.
type Plan struct {
	Title string
	Steps []PlanStep
}

// Stat is a figure with its label (a total score, a rank).
type Stat struct {
	Label, Value string
}

// Stats is a row of figures.
type Stats struct{ Items []Stat }

// Progress is a progress bar: Done of Total, with a label ("clause 3 of 15").
type Progress struct {
	Label       string
	Done, Total int
}

// Downloads lists artifacts to download.
type Downloads struct {
	Items []Download
}

// Download is one artifact link.
type Download struct {
	Key, Label string
}

// Section groups blocks under a title, as a card; ID is its anchor.
type Section struct {
	ID     string
	Title  string
	Meta   string // a muted line under the title
	Badge  string // a badge beside the title: its text
	Class  string // the badge's class
	Blocks []Block
}

// Notice is a message box: Kind "info", "ok", "warn" or "error".
type Notice struct {
	Kind, Text string
}

func (Heading) block()       {}
func (Paragraph) block()     {}
func (KeyValues) block()     {}
func (Table) block()         {}
func (Citations) block()     {}
func (Redline) block()       {}
func (ScoreField) block()    {}
func (TextBox) block()       {}
func (ItemDecisions) block() {}
func (Image) block()         {}
func (PagePreview) block()   {}
func (Code) block()          {}
func (Plan) block()          {}
func (Stats) block()         {}
func (Progress) block()      {}
func (Downloads) block()     {}
func (Section) block()       {}
func (Notice) block()        {}
func (Quote) block()         {}
