package bidevalpg

import (
	"strings"

	"weft/internal/postgres"
)

// searchDocument is the chunks.search value of a chunk.
func searchDocument(text string) string { return strings.Join(postgres.SearchTokens(text), " ") }

// searchQuery is an OR tsquery of text's tokens (empty: nothing to find).
// Tokens only hold letters and digits, so they need no quoting.
func searchQuery(text string) string {
	seen := map[string]bool{}
	var terms []string
	for _, t := range postgres.SearchTokens(text) {
		if !seen[t] && !stopWords[t] {
			seen[t] = true
			terms = append(terms, t)
		}
	}
	return strings.Join(terms, " | ")
}

var stopWords = map[string]bool{"the": true, "and": true, "of": true, "to": true, "in": true, "for": true, "a": true,
	"an": true, "is": true, "on": true, "with": true, "by": true, "or": true, "be": true, "are": true, "at": true, "as": true}
