package bideval

import (
	"net/url"
	"strconv"
	"strings"
)

// The console's addresses of bid evaluation's own pages (served by bidevalhttp): what its
// views, its review's evidence and the lists that name its runs link to.

// ProjectPath is a tender's page.
func ProjectPath(projectID string) string { return "/projects/" + url.PathEscape(projectID) }

// DocumentPath is the page of one of a tender's bid documents.
func DocumentPath(projectID, documentID string) string {
	return ProjectPath(projectID) + "/documents/" + url.PathEscape(documentID)
}

// ChunkPath is a chunk (id "<document id>#<seq>") at its place in its bid document's page.
func ChunkPath(projectID, documentID, chunkID string) string {
	href := DocumentPath(projectID, documentID)
	if i := strings.LastIndexByte(chunkID, '#'); i >= 0 {
		if _, err := strconv.Atoi(chunkID[i+1:]); err == nil {
			href += "#chunk-" + chunkID[i+1:]
		}
	}
	return href
}

// RulePackPath is a tender's rule pack page.
func RulePackPath(projectID string) string { return ProjectPath(projectID) + "/rule-pack" }

// NewTenderPath is the new tender form.
const NewTenderPath = "/projects/new"
