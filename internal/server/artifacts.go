package server

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"weft/internal/auth"
)

// Artifacts: the files a thread's runs made, served from a path of their own (/files/…),
// never as one of the console's pages: every answer carries a sandbox Content-Security-Policy,
// so a generated web page runs in an opaque origin (no script, no cookies, no reach into the
// console) and may only be framed by the console. The tenant comes from the session or the
// API token: another tenant's thread is a 404.

// artifactCSP sandboxes an artifact: no scripts, no forms, its own opaque origin; its styles
// and images may come from itself or from the same artifact path.
const artifactCSP = "sandbox; default-src 'none'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; frame-ancestors 'self'"

func (s *Server) routesArtifacts(g *echo.Group) {
	g.GET("/files/:thread/*", s.artifactFile, requireRole(auth.PM, auth.Reviewer, auth.Admin))
}

// artifactKey is the artifact key of the request's wildcard (its path, unescaped segment by
// segment).
func artifactKey(c echo.Context) (string, bool) {
	parts := strings.Split(c.Param("*"), "/")
	for i, p := range parts {
		u, err := url.PathUnescape(p)
		if err != nil || u == "" || u == "." || u == ".." {
			return "", false
		}
		parts[i] = u
	}
	return strings.Join(parts, "/"), true
}

// artifactFile answers one artifact of one of the tenant's threads.
func (s *Server) artifactFile(c echo.Context) error {
	key, ok := artifactKey(c)
	if !ok {
		return notFound()
	}
	thread, err := url.PathUnescape(c.Param("thread"))
	if err != nil {
		return notFound()
	}
	return s.serveArtifact(c, thread, key)
}

// serveArtifact answers the tenant's artifact key of thread, sandboxed.
func (s *Server) serveArtifact(c echo.Context, thread, key string) error {
	a, err := s.app.Artifacts.Get(c.Request().Context(), currentUser(c).TenantID, thread, key)
	if err != nil {
		return err
	}
	h := c.Response().Header()
	h.Set("Content-Security-Policy", artifactCSP)
	h.Set("X-Frame-Options", "SAMEORIGIN")
	h.Set("Cache-Control", "private, no-cache")
	h.Set("ETag", `"`+a.SHA256+`"`)
	disposition := "inline"
	if c.QueryParam("download") != "" || !inlineType(a.ContentType) {
		disposition = "attachment"
	}
	h.Set("Content-Disposition", disposition+"; filename*=UTF-8''"+url.PathEscape(a.Name))
	if match := c.Request().Header.Get("If-None-Match"); match == `"`+a.SHA256+`"` {
		return c.NoContent(http.StatusNotModified)
	}
	h.Set("Last-Modified", a.UpdatedAt.UTC().Format(time.RFC1123))
	return c.Blob(http.StatusOK, a.ContentType, a.Data)
}

// inlineType: a type a browser shows itself (pages, images, text); others download.
func inlineType(contentType string) bool {
	mt, _, _ := strings.Cut(contentType, ";")
	mt = strings.TrimSpace(strings.ToLower(mt))
	return mt == "text/html" || mt == "text/plain" || mt == "text/css" || mt == "image/png" || mt == "image/jpeg" ||
		mt == "image/svg+xml" || mt == "image/gif" || mt == "image/webp" || mt == "text/markdown"
}

// apiArtifacts lists a thread's artifacts.
func (s *Server) apiArtifacts(c echo.Context) error {
	ctx := c.Request().Context()
	j, _, err := s.threadOf(ctx, currentUser(c).TenantID, c.Param("id"))
	if err != nil {
		return err
	}
	arts, err := s.app.Artifacts.List(ctx, j.TenantID, j.ThreadID)
	if err != nil {
		return err
	}
	type item struct {
		Key         string    `json:"key"`
		Name        string    `json:"name"`
		ContentType string    `json:"content_type"`
		Size        int64     `json:"size"`
		SHA256      string    `json:"sha256"`
		Version     int       `json:"version"`
		UpdatedAt   time.Time `json:"updated_at"`
		URL         string    `json:"url"`
	}
	out := make([]item, 0, len(arts))
	for _, a := range arts {
		out = append(out, item{Key: a.Key, Name: a.Name, ContentType: a.ContentType, Size: a.Size, SHA256: a.SHA256, Version: a.Version,
			UpdatedAt: a.UpdatedAt, URL: "/api/v1/threads/" + url.PathEscape(j.ThreadID) + "/artifacts/" + a.Key})
	}
	return c.JSON(http.StatusOK, map[string]any{"artifacts": out})
}

// apiArtifact answers one artifact's bytes, as the console does.
func (s *Server) apiArtifact(c echo.Context) error {
	key, ok := artifactKey(c)
	if !ok {
		return notFound()
	}
	return s.serveArtifact(c, c.Param("id"), key)
}
