package workflow

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"weft/internal/usertext"
)

// FieldKind is the kind of a start field, and so its input element and JSON type.
type FieldKind string

// Field kinds.
const (
	Text     FieldKind = "text"      // one line; JSON string
	LongText FieldKind = "long_text" // several lines; JSON string
	Number   FieldKind = "number"    // JSON number
	Bool     FieldKind = "bool"      // a checkbox; JSON true/false
	Select   FieldKind = "select"    // one of Options; JSON string
	Upload   FieldKind = "file"      // a file; JSON {"name", "content_base64"}
)

// Option is one choice of a select field.
type Option struct {
	Value, Label string
}

// Field is one start field, in the spirit of relui's parameter definitions: what it is
// called, what it holds and its limits, so the console can render it and both the console
// and the API can check it.
type Field struct {
	Name        string // the form field and JSON key
	Label       string
	Help        string
	Kind        FieldKind
	Required    bool
	Default     string // the initial value as the form shows it ("true" checks a bool)
	Placeholder string
	Options     []Option // select
	Min, Max    *float64 // number
	Step        float64  // number: values must be whole multiples (0: any)
	MaxLength   int      // text, long text: in characters (0: 10,000)
	Accept      []string // file: allowed extensions, lower case with the dot (".pdf")
	MaxBytes    int64    // file: the size limit (0: 10 MB)
}

// File is an uploaded file.
type File struct {
	Name        string `json:"name"`
	ContentType string `json:"content_type,omitempty"`
	Data        []byte `json:"-"`
}

// Values are a start form's checked values by field name: string (text, long text,
// select), float64 (number), bool, File. An optional field left empty is absent.
type Values map[string]any

// String returns a text value ("" when absent).
func (v Values) String(name string) string { s, _ := v[name].(string); return s }

// Number returns a number value and whether it was given.
func (v Values) Number(name string) (float64, bool) { f, ok := v[name].(float64); return f, ok }

// Bool returns a bool value (false when absent).
func (v Values) Bool(name string) bool { b, _ := v[name].(bool); return b }

// File returns a file value and whether one was given.
func (v Values) File(name string) (File, bool) { f, ok := v[name].(File); return f, ok }

// StartForm is a workflow's start form.
type StartForm struct {
	Fields []Field
	// Start turns checked values into the run to queue. It may refuse them with
	// FieldErrors (a contract whose text cannot be read, say) or a fault. Without it, the
	// values are the input (field names being channel names) on a new thread.
	Start func(ctx context.Context, req StartRequest, v Values) (Start, error)
	// Elsewhere: the console offers no generic start page; the workflow's own pages start
	// its runs (a bid evaluation from its tender), and the API takes the fields.
	Elsewhere bool
}

// StartRequest is who starts a run, and where.
type StartRequest struct {
	TenantID string
	Actor    string // a user id, or "system:…"
	// ThreadID is the thread a follow-up run goes on (Definition.FollowUp); "" for a start.
	ThreadID string
	// TraceID is the caller's trace id when it has one ("" otherwise): a Start that names its
	// run's TraceID takes it, so the run's trace continues the request's.
	TraceID string
}

// Start is a run to queue.
type Start struct {
	// Input is the run's input: a JSON object of channel values.
	Input json.RawMessage
	// ThreadID, when set, runs on that thread (a bid evaluation's); "" makes a new one.
	ThreadID string
	// Subject names the run in lists ("" : SubjectOf(Input), when set).
	Subject string
	// TraceID, when set, is the run's trace id.
	TraceID string
	// Started, when set, is called once the run is queued (to link an evaluation to its
	// job, say). Its error is reported; the run stays queued.
	Started func(ctx context.Context, jobID string) error
	// AuditAction and AuditSubject name the audit row of the start (default "run.start"
	// on the thread).
	AuditAction, AuditSubject string
}

// FieldErrors is a refusal of a form's values: a message per field name.
type FieldErrors map[string]string

func (e FieldErrors) Error() string {
	names := make([]string, 0, len(e))
	for n := range e {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = n + ": " + e[n]
	}
	return strings.Join(parts, "; ")
}

const (
	defaultMaxLength = 10_000
	defaultMaxBytes  = 10 << 20
)

// UploadBytes is the most a start's files may hold together: each file field's limit (its
// MaxBytes, else the 10 MB default), summed. A request that carries a start is bounded by it
// (and what its other fields hold).
func (f StartForm) UploadBytes() int64 {
	var n int64
	for _, fd := range f.Fields {
		if fd.Kind == Upload {
			n += cmp.Or(fd.MaxBytes, defaultMaxBytes)
		}
	}
	return n
}

// ParseForm checks a console form's values (texts by name, files by name) against the
// fields.
func (f StartForm) ParseForm(texts map[string]string, files map[string]File) (Values, error) {
	return f.parse(func(fd Field) (any, bool, error) {
		if fd.Kind == Upload {
			file, ok := files[fd.Name]
			return file, ok && (len(file.Data) > 0 || file.Name != ""), nil
		}
		s, ok := texts[fd.Name]
		if fd.Kind == Bool {
			return ok && (s == "true" || s == "on" || s == "1"), true, nil
		}
		return s, ok && strings.TrimSpace(s) != "", nil
	})
}

// ParseJSON checks an API request's input object against the fields. A file is
// {"name": "contract.pdf", "content_base64": "…"}; other keys are refused.
func (f StartForm) ParseJSON(obj json.RawMessage) (Values, error) {
	var m map[string]json.RawMessage
	dec := json.NewDecoder(strings.NewReader(string(obj)))
	dec.UseNumber()
	if len(obj) == 0 || string(obj) == "null" {
		m = map[string]json.RawMessage{}
	} else if err := dec.Decode(&m); err != nil {
		return nil, FieldErrors{"input": "must be a JSON object of the start fields"}
	}
	known := map[string]bool{}
	for _, fd := range f.Fields {
		known[fd.Name] = true
	}
	errs := FieldErrors{}
	for k := range m {
		if !known[k] {
			errs[k] = "is not a start field of this workflow"
		}
	}
	vals, err := f.parse(func(fd Field) (any, bool, error) {
		raw, ok := m[fd.Name]
		if !ok || string(raw) == "null" {
			return nil, false, nil
		}
		switch fd.Kind {
		case Upload:
			var up struct {
				Name    string `json:"name"`
				Type    string `json:"content_type"`
				Content string `json:"content_base64"`
			}
			if err := json.Unmarshal(raw, &up); err != nil {
				return nil, true, errors.New(`must be {"name": "…", "content_base64": "…"}`)
			}
			data, err := base64.StdEncoding.DecodeString(up.Content)
			if err != nil {
				return nil, true, errors.New("content_base64 is not base64")
			}
			return File{Name: up.Name, ContentType: up.Type, Data: data}, true, nil
		case Bool:
			var b bool
			if err := json.Unmarshal(raw, &b); err != nil {
				return nil, true, errors.New("must be true or false")
			}
			return b, true, nil
		case Number:
			var n json.Number
			d := json.NewDecoder(strings.NewReader(string(raw)))
			d.UseNumber()
			if err := d.Decode(&n); err != nil {
				return nil, true, errors.New("must be a number")
			}
			return n.String(), true, nil
		default:
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				return nil, true, errors.New("must be a string")
			}
			return s, strings.TrimSpace(s) != "", nil
		}
	})
	if fe, ok := err.(FieldErrors); ok {
		for k, v := range fe {
			errs[k] = v
		}
	} else if err != nil {
		return nil, err
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return vals, nil
}

// parse checks each field's raw value (get returns it, whether it was given, or a decoding
// error) and collects the errors.
func (f StartForm) parse(get func(Field) (any, bool, error)) (Values, error) {
	vals, errs := Values{}, FieldErrors{}
	for _, fd := range f.Fields {
		raw, given, err := get(fd)
		if err != nil {
			errs[fd.Name] = err.Error()
			continue
		}
		if !given {
			if fd.Required {
				errs[fd.Name] = "is required"
			}
			continue
		}
		v, err := fd.check(raw)
		if err != nil {
			errs[fd.Name] = err.Error()
			continue
		}
		vals[fd.Name] = v
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return vals, nil
}

// check turns one given raw value into the field's type, within its limits.
func (fd Field) check(raw any) (any, error) {
	switch fd.Kind {
	case Bool:
		return raw, nil
	case Upload:
		file := raw.(File)
		limit := fd.MaxBytes
		if limit <= 0 {
			limit = defaultMaxBytes
		}
		if len(file.Data) == 0 {
			return nil, errors.New("the file is empty")
		}
		if int64(len(file.Data)) > limit {
			return nil, fmt.Errorf("the file is %s, over the %s limit", byteSize(int64(len(file.Data))), byteSize(limit))
		}
		if len(fd.Accept) > 0 {
			ext := strings.ToLower(path.Ext(file.Name))
			ok := false
			for _, a := range fd.Accept {
				ok = ok || ext == a
			}
			if !ok {
				return nil, fmt.Errorf("a %q file is not accepted: send %s", ext, strings.Join(fd.Accept, ", "))
			}
		}
		return file, nil
	}
	s := raw.(string)
	if err := usertext.Check(fd.Name, s); err != nil {
		return nil, errors.New(strings.TrimPrefix(err.Error(), fd.Name+" "))
	}
	switch fd.Kind {
	case Number:
		v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || !plainDecimal(strings.TrimSpace(s)) {
			return nil, fmt.Errorf("%q is not a number", s)
		}
		if fd.Min != nil && v < *fd.Min {
			return nil, fmt.Errorf("must be at least %s", fmtNum(*fd.Min))
		}
		if fd.Max != nil && v > *fd.Max {
			return nil, fmt.Errorf("must be at most %s", fmtNum(*fd.Max))
		}
		if fd.Step > 0 && !OnStep(strings.TrimSpace(s), fd.Step) {
			return nil, fmt.Errorf("must be in steps of %s", fmtNum(fd.Step))
		}
		return v, nil
	case Select:
		for _, o := range fd.Options {
			if o.Value == s {
				return s, nil
			}
		}
		return nil, fmt.Errorf("%q is not one of the choices", s)
	default:
		max := fd.MaxLength
		if max <= 0 {
			max = defaultMaxLength
		}
		if n := utf8.RuneCountInString(s); n > max {
			return nil, fmt.Errorf("is %d characters long, over the limit of %d", n, max)
		}
		if fd.Kind == Text && strings.ContainsAny(s, "\r\n") {
			return nil, errors.New("must be one line")
		}
		return s, nil
	}
}

// plainDecimal reports whether s is a plain decimal number: an optional sign, digits, an
// optional fraction (no exponent, hex or underscores, which strconv.ParseFloat also reads).
func plainDecimal(s string) bool {
	s = strings.TrimPrefix(strings.TrimPrefix(s, "-"), "+")
	whole, frac, dot := strings.Cut(s, ".")
	if whole == "" && frac == "" {
		return false
	}
	for _, part := range []string{whole, frac} {
		for _, r := range part {
			if r < '0' || r > '9' {
				return false
			}
		}
	}
	return !dot || frac != ""
}

// OnStep reports whether the decimal text s is a whole multiple of step, judged on its
// written digits (0.30000000000000004 is not in steps of 0.1, though it is 0.3 as a float).
func OnStep(s string, step float64) bool {
	if !plainDecimal(s) || step <= 0 {
		return false
	}
	_, frac, _ := strings.Cut(s, ".")
	frac = strings.TrimRight(frac, "0")
	places := 0
	for p := step; p != math.Trunc(p) && places < 9; p *= 10 {
		places++
	}
	if len(frac) > places {
		return false
	}
	v, _ := strconv.ParseFloat(s, 64)
	q := v / step
	return math.Abs(q-math.Round(q)) < 1e-9
}

func fmtNum(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func byteSize(n int64) string {
	switch {
	case n >= 1<<20:
		return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MB"
	case n >= 1<<10:
		return strconv.FormatFloat(float64(n)/(1<<10), 'f', 1, 64) + " KB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}
