package page

import (
	"strconv"
	"strings"

	"weft/internal/workflow"
)

// WorkflowStartVM is the form that starts a run of a workflow.
type WorkflowStartVM struct {
	Name, Title, Description string
	Action                   string // where the form posts
	Input                    string // the input as typed (or the workflow's example)
	Error                    string // why the last submission was refused
	ErrorCode                string
	CSRF                     string
	DraftKey                 string // where the browser keeps what is typed (drafts.js)
	// Fields, when set, are the workflow's start fields (a typed form instead of the JSON
	// input), with what was typed and each field's error.
	Fields []StartFieldVM
}

// StartFieldVM is one start field of the form.
type StartFieldVM struct {
	workflow.Field
	Value string // as typed, or the field's default
	Error string
}

// Multipart: the form sends a file, so it is encoded as multipart/form-data.
func (v WorkflowStartVM) Multipart() bool { return multipart(v.Fields) }

// Multipart: the form sends a file, so it is encoded as multipart/form-data.
func (v ThreadFollowUpVM) Multipart() bool { return multipart(v.Fields) }

func multipart(fields []StartFieldVM) bool {
	for _, f := range fields {
		if f.Kind == workflow.Upload {
			return true
		}
	}
	return false
}

func (f StartFieldVM) accept() string { return strings.Join(f.Accept, ",") }

func (f StartFieldVM) num(p *float64) string {
	if p == nil {
		return ""
	}
	return strconv.FormatFloat(*p, 'f', -1, 64)
}

func (f StartFieldVM) step() string {
	if f.Step <= 0 {
		return "any"
	}
	return strconv.FormatFloat(f.Step, 'f', -1, 64)
}

func (f StartFieldVM) maxLen() string {
	if f.MaxLength <= 0 {
		return "10000"
	}
	return strconv.Itoa(f.MaxLength)
}

func (f StartFieldVM) id() string { return "field-" + f.Name }

func optionLabel(o workflow.Option) string {
	if o.Label != "" {
		return o.Label
	}
	return o.Value
}
