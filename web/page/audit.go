package page

import (
	"net/url"
	"strconv"
)

// The audit log page (audit.templ): the view models the handlers of
// internal/server/admin.go fill in.

// AuditVM is the audit log page: the filter form and the table.
type AuditVM struct {
	Filter    AuditFilterVM
	Workflows []AdminOption // the workflow select (the registry's workflows)
	Actions   []string      // suggestions for the action field
	// Error is why the filter was refused (the page is answered with 400 and
	// no table; the form keeps what was typed).
	Error string
	Table AuditTableVM
}

// AdminOption is one option of a select of the admin pages.
type AdminOption struct {
	Value, Label string
}

// AuditFilterVM is the filter as typed (the form's values and the links'
// query).
type AuditFilterVM struct {
	Actor, Action, Subject, Workflow string
	From, To                         string // datetime-local values, UTC
}

// Active reports whether any filter is set.
func (f AuditFilterVM) Active() bool {
	return f.Actor != "" || f.Action != "" || f.Subject != "" || f.Workflow != "" || f.From != "" || f.To != ""
}

// Query is the filter as a URL query (empty fields left out).
func (f AuditFilterVM) Query() url.Values {
	q := url.Values{}
	for _, kv := range [][2]string{{"actor", f.Actor}, {"action", f.Action}, {"subject", f.Subject},
		{"workflow", f.Workflow}, {"from", f.From}, {"to", f.To}} {
		if kv[1] != "" {
			q.Set(kv[0], kv[1])
		}
	}
	return q
}

// Href is path with the filter, and more query parameters as key, value pairs.
func (f AuditFilterVM) Href(path string, kv ...string) string {
	q := f.Query()
	for i := 0; i+1 < len(kv); i += 2 {
		q.Set(kv[i], kv[i+1])
	}
	if len(q) == 0 {
		return path
	}
	return path + "?" + q.Encode()
}

// With is the filter with one field replaced (for the table's filter links).
func (f AuditFilterVM) With(field, value string) AuditFilterVM {
	switch field {
	case "actor":
		f.Actor = value
	case "action":
		f.Action = value
	case "subject":
		f.Subject = value
	case "workflow":
		f.Workflow = value
	}
	return f
}

// AuditTableVM is the table region: one page of entries.
type AuditTableVM struct {
	Filter AuditFilterVM
	Rows   []AuditRow
	// Before (or After) is the cursor of this page (both 0: the newest page); Next the
	// cursor of the older page (0: this is the last page), Prev the newer page's (0: none).
	Before, After, Next, Prev int64
}

// NewerHref is the link to the page just newer than this one ("" when none is).
func (t AuditTableVM) NewerHref() string {
	if t.Prev == 0 {
		return ""
	}
	return t.Filter.Href("/audit", "after", strconv.FormatInt(t.Prev, 10))
}

// OlderHref is the link to the next, older page ("" on the last page).
func (t AuditTableVM) OlderHref() string {
	if t.Next == 0 {
		return ""
	}
	return t.Filter.Href("/audit", "before", strconv.FormatInt(t.Next, 10))
}

// NewestHref is the link back to the first page ("" on it).
func (t AuditTableVM) NewestHref() string {
	if t.Before == 0 && t.After == 0 {
		return ""
	}
	return t.Filter.Href("/audit")
}

// CSVHref exports the filtered entries.
func (t AuditTableVM) CSVHref() string { return t.Filter.Href("/audit.csv") }

// AuditRow is one audit entry.
type AuditRow struct {
	ID            int64
	At            string // full UTC time
	Ago           string
	Actor         string
	ActorName     string // the user's name when the actor is a user, else the actor
	Action        string
	Subject       string
	SubjectHref   string // the thread the subject stands for, when it is one
	Workflow      string // the workflow's name
	WorkflowTitle string // its title, when registered
	Payload       string // compact JSON
	PayloadPretty string // indented JSON
}

// PayloadEmpty reports whether the payload carries nothing.
func (r AuditRow) PayloadEmpty() bool { return r.Payload == "" || r.Payload == "{}" }

// PayloadShort is the payload cut for the summary line.
func (r AuditRow) PayloadShort() string {
	const max = 72
	rs := []rune(r.Payload)
	if len(rs) <= max {
		return r.Payload
	}
	return string(rs[:max]) + "…"
}

func int64s(i int64) string { return strconv.FormatInt(i, 10) }

// timeStep is a datetime-local input's step for its value: seconds ("1") when the value has
// them, which the default step of a minute would refuse to submit; else the default.
func timeStep(v string) string {
	if len(v) > len("2006-01-02T15:04") {
		return "1"
	}
	return "60"
}
