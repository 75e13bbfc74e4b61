package page

import (
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"
)

// ChunkHref is a chunk (id "<document id>#<seq>") at its place in its bid document's page.
// (The review page's evidence links, until the review moves onto the plug-in contract.)
func ChunkHref(projectID, documentID, chunkID string) templ.SafeURL {
	href := "/projects/" + url.PathEscape(projectID) + "/documents/" + url.PathEscape(documentID)
	if i := strings.LastIndexByte(chunkID, '#'); i >= 0 {
		if _, err := strconv.Atoi(chunkID[i+1:]); err == nil {
			href += "#chunk-" + chunkID[i+1:]
		}
	}
	return templ.URL(href)
}

// WithdrawnNote says who withdrew a bid document and when ("" when at is nil):
// "Withdrawn by pm@demo.weft on 2026-11-23 18:35 UTC". (The review page's evidence marks,
// until the review moves onto the plug-in contract.)
func WithdrawnNote(at *time.Time, by string) string {
	if at == nil {
		return ""
	}
	if by == "" {
		by = "someone"
	}
	return "Withdrawn by " + by + " on " + at.UTC().Format("2006-01-02 15:04") + " UTC"
}
