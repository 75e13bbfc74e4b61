package bidevalhttp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"weft/internal/doctext"
	"weft/internal/postgres"
	"weft/internal/server/mount"
	"weft/internal/usertext"
	"weft/internal/workflow/bideval"
	"weft/internal/workflow/bideval/bidevalpg"
)

// mediaTypes are the stored media types of the formats doctext reads.
var mediaTypes = map[doctext.Format]string{
	doctext.FormatText:     "text/plain",
	doctext.FormatMarkdown: "text/markdown",
	doctext.FormatDOCX:     "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
	doctext.FormatPDF:      "application/pdf",
}

// readBidDocument reads an uploaded bid document's text through doctext (pdftotext -layout
// for PDF, pandoc for DOCX; each without a shell, under a timeout, with bounded input and
// output). A file refused for what it is (too large, a scan with no text layer, an encrypted
// PDF, a DOCX that is not one, text a reviewer could be misled by) comes back as msg, for the
// person who sent it; err is for the server's own failures (a tool not installed).
func (h *handler) readBidDocument(ctx context.Context, filename string, data []byte) (body, media, msg string, err error) {
	if len(data) > maxUpload {
		return "", "", fmt.Sprintf("The file is larger than %d MB.", maxUpload>>20), nil
	}
	// A text file is checked as typed first: the refusal names the character and where it is.
	if ext := strings.ToLower(filepath.Ext(filename)); (ext == ".txt" || ext == ".md") && utf8.Valid(data) {
		if msg := textProblem(string(data)); msg != "" {
			return "", "", msg, nil
		}
	}
	t, err := doctext.Extract(ctx, filename, data)
	if err != nil {
		status, _, m := h.Explain(err)
		var de *doctext.Error
		if errors.As(err, &de) && status < http.StatusInternalServerError {
			return "", "", mount.Sentence(de.Msg) + ".", nil
		}
		if status < http.StatusInternalServerError {
			return "", "", m, nil
		}
		return "", "", "", err
	}
	if msg := textProblem(t.Body); msg != "" {
		return "", "", msg, nil
	}
	return t.Body, mediaTypes[t.Format], "", nil
}

// textProblem says why a document's text cannot be stored or would mislead ("" when fine).
func textProblem(text string) string {
	err := usertext.Check("the file", text)
	if err == nil {
		return ""
	}
	var ue *usertext.Error
	switch errors.As(err, &ue); {
	case ue != nil && (ue.Problem == usertext.NotUTF8 || ue.Char == 0): // a NUL byte: PostgreSQL's text refuses it
		return mount.Sentence(err.Error()) + ": it is not a text file. Upload a PDF, a .docx, or .txt or .md text (UTF-8)."
	case ue != nil && ue.Problem == usertext.Direction:
		return mount.Sentence(err.Error()) + ": a reviewer would see other words or figures than the rules and the scoring read. Remove it and upload again."
	}
	return mount.Sentence(err.Error()) + ". Remove it and upload again."
}

// readUpload reads an uploaded file (at most maxUpload bytes and one more, to tell a larger
// one) as a bid document (readBidDocument).
func (h *handler) readUpload(ctx context.Context, fh *multipart.FileHeader) (body, media, msg string, err error) {
	f, err := fh.Open()
	if err != nil {
		return "", "", "", err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxUpload+1))
	if err != nil {
		return "", "", "", err
	}
	return h.readBidDocument(ctx, fh.Filename, data)
}

// storeBidDocument adds a read document to the evaluation's supplier (chunk ids
// "<document>#<n>", stable for the document) and audits it.
func (h *handler) storeBidDocument(ctx context.Context, tenantID, actor string, ev bidevalpg.Evaluation, title, media, body string) (string, int, error) {
	docID := fmt.Sprintf("%s-doc-%d", ev.SupplierID, time.Now().UnixNano())
	n, err := h.Store.AddDocument(ctx, tenantID, ev.SupplierID, docID, title, media, body)
	if err != nil {
		return "", 0, err
	}
	payload, _ := json.Marshal(map[string]any{"document_id": docID, "title": title, "chunks": n, "bytes": len(body), "media_type": media})
	if _, err := h.Audit.Append(ctx, postgres.Entry{TenantID: tenantID, Actor: actor, Action: bideval.ActionDocumentUpload, Subject: ev.ID,
		Workflow: bideval.Name, Payload: payload}); err != nil {
		return "", 0, err
	}
	return docID, n, nil
}
