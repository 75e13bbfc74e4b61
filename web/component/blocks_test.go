package component

import (
	"context"
	"strings"
	"testing"

	"weft/internal/workflow"
)

// TestWords: only a word with a part longer than longWord characters that a browser would not
// break is marked as a token free to break anywhere; other words, the spaces between words and
// escaping are kept as written.
func TestWords(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("checkpointing", 2) // 26 characters
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"Implementation plan", "Implementation plan"},
		{"BID_NO_DOCUMENTS at retrieve_evidence", `<span class="token">BID_NO_DOCUMENTS</span> at <span class="token">retrieve_evidence</span>`},
		{"  two  spaces\tand a tab ", "  two  spaces\tand a tab "},
		{"a " + long + " b", `a <span class="token">` + long + `</span> b`},
		{long, `<span class="token">` + long + `</span>`},
		{"<b>&amp;</b>", "&lt;b&gt;&amp;amp;&lt;/b&gt;"},
		{"https://example.com/" + long + "?a=1&b=2", `<span class="token">https://example.com/` + long + `?a=1&amp;b=2</span>`},
		{strings.Repeat("é", longWord), strings.Repeat("é", longWord)}, // characters, not bytes
		// A browser breaks after a hyphen and between Chinese characters by itself.
		{"demo-northwind-technical#1 01a21fa8-3eab-77cc-ac32-ba3cf010cde9", "demo-northwind-technical#1 01a21fa8-3eab-77cc-ac32-ba3cf010cde9"},
		{"数据中心网络升级项目的技术方案与实施计划说明书以及相关附件材料", "数据中心网络升级项目的技术方案与实施计划说明书以及相关附件材料"},
		{"short-" + long, `<span class="token">short-` + long + `</span>`},
		{"审" + long, `<span class="token">审` + long + `</span>`},
	} {
		var b strings.Builder
		if err := Words(c.in).Render(context.Background(), &b); err != nil {
			t.Fatal(err)
		}
		if b.String() != c.want {
			t.Errorf("Words(%q) = %q, want %q", c.in, b.String(), c.want)
		}
	}
}

// TestQuoteMarks: a quote renders its text as written (escaped, line breaks kept), each
// mark around exactly its words, with its class, note and label.
func TestQuoteMarks(t *testing.T) {
	t.Parallel()
	text := "17.6 <Limit>\nshall not exceed 10% of the Contract Price."
	at := strings.Index(text, "10% of the Contract Price")
	q := workflow.Quote{ID: "clause-17.6", Text: text, Marks: []workflow.Mark{
		{Start: at, End: at + len("10% of the Contract Price"), Class: workflow.SeverityCritical, Label: "R1", Note: `cap "below" price`}}}
	var b strings.Builder
	if err := Block("th", q).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	for _, want := range []string{
		`<figure class="block-quote" id="clause-17.6">`,
		"17.6 &lt;Limit&gt;\nshall not exceed " +
			`<mark class="quote-mark critical" title="cap &#34;below&#34; price">10% of the Contract Price<sup class="quote-label">R1</sup></mark>.`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("rendered quote lacks %q:\n%s", want, got)
		}
	}
}

// TestCodeMarks: a code block renders its text exactly as written (escaped, white space and
// line breaks kept), each mark as a span of its token class; a block without marks is plain.
func TestCodeMarks(t *testing.T) {
	t.Parallel()
	text := "SELECT a\n  FROM t WHERE b < 'x&y'"
	kw, str := strings.Index(text, "SELECT"), strings.Index(text, "'x&y'")
	render := func(c workflow.Code) string {
		var b strings.Builder
		if err := Block("th", c).Render(context.Background(), &b); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	got := render(workflow.Code{Language: "sql", Text: text, Marks: []workflow.Mark{
		{Start: kw, End: kw + 6, Class: workflow.CodeKeyword}, {Start: str, End: str + 5, Class: workflow.CodeString}}})
	want := `<pre class="code lang-sql"><code><span class="tok-kw">SELECT</span> a` + "\n" + `  FROM t WHERE b &lt; <span class="tok-str">&#39;x&amp;y&#39;</span></code></pre>`
	if !strings.Contains(got, want) {
		t.Errorf("marked code:\n%s\nwant it to hold\n%s", got, want)
	}
	if got := render(workflow.Code{Language: "sql", Text: text}); !strings.Contains(got, `<code>SELECT a`+"\n"+`  FROM t WHERE b &lt; &#39;x&amp;y&#39;</code>`) {
		t.Errorf("plain code: %s", got)
	}
}
