package workflow

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"strings"
	"unicode/utf8"
)

// Artifact is a file a run makes: a redlined contract, a generated page, a
// chart, a CSV export. It belongs to the tenant and thread of the run that
// wrote it.
type Artifact struct {
	// Key names the artifact within its thread ("redline.docx",
	// "pages/home.html"). Writing the same key again replaces it only when the
	// bytes differ; the same bytes are a no-op, so a replayed node writes
	// nothing twice.
	Key string `json:"key"`
	// Name is the file name a download gets.
	Name string `json:"name"`
	// ContentType is the media type ("text/html; charset=utf-8").
	ContentType string `json:"content_type"`
	Data        []byte `json:"-"`
}

// ArtifactRef is a stored artifact without its bytes.
type ArtifactRef struct {
	ID          string `json:"id"`
	Key         string `json:"key"`
	Name        string `json:"name"`
	ContentType string `json:"content_type"`
	Size        int64  `json:"size"`
	SHA256      string `json:"sha256"`
}

// MaxArtifactBytes bounds one artifact.
const MaxArtifactBytes = 20 << 20

// ArtifactStore keeps a run's artifacts. The platform's store takes the
// tenant and thread from the running job (ctx), never from the caller.
type ArtifactStore interface {
	PutArtifact(ctx context.Context, a Artifact) (ArtifactRef, error)
}

// ErrArtifactInvalid is returned for an artifact that may not be stored.
var ErrArtifactInvalid = errors.New("artifact invalid")

// Validate checks an artifact before it is stored: a key of at most 200
// characters of letters, digits and ./_- (no "..", no leading "/"), a name,
// a parseable content type, and at most MaxArtifactBytes of data.
func (a Artifact) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrArtifactInvalid, fmt.Sprintf(format, args...))
	}
	if a.Key == "" || len(a.Key) > 200 || strings.HasPrefix(a.Key, "/") || strings.Contains(a.Key, "..") {
		return bad("key %q must be 1–200 characters, relative, without '..'", a.Key)
	}
	for _, r := range a.Key {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("./_-", r)) {
			return bad("key %q may hold letters, digits and ./_- only", a.Key)
		}
	}
	if strings.TrimSpace(a.Name) == "" || !utf8.ValidString(a.Name) || strings.ContainsAny(a.Name, "/\\\"\r\n") || len(a.Name) > 200 {
		return bad("name %q must be a plain file name", a.Name)
	}
	if _, _, err := mime.ParseMediaType(a.ContentType); err != nil {
		return bad("content type %q: %v", a.ContentType, err)
	}
	if len(a.Data) > MaxArtifactBytes {
		return bad("%s is %d bytes, over the %d-byte limit", a.Key, len(a.Data), MaxArtifactBytes)
	}
	return nil
}

// IsHTML reports whether the artifact is a web page: one served only from the
// sandboxed path.
func (a ArtifactRef) IsHTML() bool { return IsHTMLType(a.ContentType) }

// IsHTMLType reports whether a media type is HTML (or XHTML, or SVG, which can script).
func IsHTMLType(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return true // unknown: treat as the dangerous kind
	}
	return mt == "text/html" || mt == "application/xhtml+xml" || mt == "image/svg+xml"
}
