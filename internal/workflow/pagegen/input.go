package pagegen

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"strings"
	"unicode/utf8"

	"weft/internal/fault"
	"weft/internal/graph"
)

// Input limits.
const (
	MaxRequestBytes  = 8 << 10  // the request text
	MaxLogoBytes     = 5 << 20  // an uploaded logo
	MaxLogoPixels    = 40 << 20 // width × height, against decompression bombs
	MaxFeedbackBytes = 10 << 10 // one round's feedback
)

// Codes of this workflow's validation errors.
const (
	CodeEmptyRequest     = "PAGEGEN_EMPTY_REQUEST"
	CodeRequestTooLarge  = "PAGEGEN_REQUEST_TOO_LARGE"
	CodeLogoTooLarge     = "PAGEGEN_LOGO_TOO_LARGE"
	CodeLogoNotImage     = "PAGEGEN_LOGO_NOT_IMAGE"
	CodeFeedbackTooLarge = "PAGEGEN_FEEDBACK_TOO_LARGE"
	CodeFeedbackEmpty    = "PAGEGEN_FEEDBACK_EMPTY"
	CodeNotResumable     = "PAGEGEN_NOT_RESUMABLE"
	CodeNotWaiting       = "PAGEGEN_NOT_WAITING"
	CodeInputInvalid     = "PAGEGEN_INPUT_INVALID"
)

// Sentinels of bad input; every one comes wrapped in an *InputError.
var (
	ErrEmptyRequest     = errors.New("the request is empty")
	ErrRequestTooLarge  = errors.New("the request is too long")
	ErrLogoTooLarge     = errors.New("the logo is too large")
	ErrLogoNotImage     = errors.New("the logo is not an image")
	ErrFeedbackTooLarge = errors.New("the feedback is too long")
	ErrFeedbackEmpty    = errors.New("the feedback is empty")
	ErrInputInvalid     = errors.New("the input is not a page-generation request")
)

// InputError is bad input: which field, the sentinel it is (errors.Is), and a message
// safe to show. It is classified fault.Validation with its code (fault.Classify), so
// the platform neither retries it nor stores anything of the run.
type InputError struct {
	Field   string
	Code    string
	Message string
	Err     error
}

func (e *InputError) Error() string { return e.Code + ": " + e.Message }

// Unwrap gives the sentinel and the classified fault.
func (e *InputError) Unwrap() []error {
	return []error{e.Err, fault.New(fault.Validation, e.Code, e.Message)}
}

func inputError(field, code string, sentinel error, format string, args ...any) *InputError {
	return &InputError{Field: field, Code: code, Message: fmt.Sprintf(format, args...), Err: sentinel}
}

// Request is a session's start: the request text, an optional logo and the aesthetic
// check toggle.
type Request struct {
	Text      string
	Logo      *Asset
	Aesthetic bool
	RunID     string
}

// Validate checks a request before anything runs: a non-empty text of at most
// MaxRequestBytes, and a logo (when given) of at most MaxLogoBytes that decodes as PNG,
// JPEG or GIF of at most MaxLogoPixels.
func (r Request) Validate() error {
	if strings.TrimSpace(r.Text) == "" {
		return inputError("user_input", CodeEmptyRequest, ErrEmptyRequest, "describe the site to build, e.g. \"a landing page for Brewly, a coffee subscription, with pricing and a contact form\"")
	}
	if len(r.Text) > MaxRequestBytes || !utf8.ValidString(r.Text) {
		return inputError("user_input", CodeRequestTooLarge, ErrRequestTooLarge, "the request is %d bytes; at most %d bytes of UTF-8 text are read", len(r.Text), MaxRequestBytes)
	}
	if r.Logo != nil {
		return checkLogo(*r.Logo)
	}
	return nil
}

func checkLogo(a Asset) error {
	if len(a.Data) > MaxLogoBytes {
		return inputError("assets", CodeLogoTooLarge, ErrLogoTooLarge, "the logo %q is %.1f MB; at most %d MB", a.Name, float64(len(a.Data))/(1<<20), MaxLogoBytes>>20)
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(a.Data))
	if err != nil {
		return inputError("assets", CodeLogoNotImage, ErrLogoNotImage, "the logo %q is not a PNG, JPEG or GIF image", a.Name)
	}
	if cfg.Width*cfg.Height > MaxLogoPixels || cfg.Width <= 0 || cfg.Height <= 0 {
		return inputError("assets", CodeLogoTooLarge, ErrLogoTooLarge, "the logo %q is %d×%d pixels; at most %d megapixels", a.Name, cfg.Width, cfg.Height, MaxLogoPixels>>20)
	}
	return nil
}

// Writes is the request as a run's input (START's writes), after Validate.
func (r Request) Writes() ([]graph.Write, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	ws := []graph.Write{keyUserInput.Set(strings.TrimSpace(r.Text)), keyAestheticEnabled.Set(r.Aesthetic)}
	if r.Logo != nil {
		logo := *r.Logo
		if logo.Kind == "" {
			logo.Kind = "logo"
		}
		ws = append(ws, keyAssets.Set([]Asset{logo}))
	}
	if r.RunID != "" {
		ws = append(ws, keyRunID.Set(r.RunID))
	}
	return ws, nil
}

// CheckInput validates a run's input given as JSON (channel → value), as the API and the
// console's raw form send it: a new session needs user_input (and may carry assets and
// aesthetic_enabled); a later round on an existing session may carry user_feedback alone.
func CheckInput(input json.RawMessage) error {
	var in struct {
		UserInput        *string `json:"user_input"`
		Assets           []Asset `json:"assets"`
		UserFeedback     *string `json:"user_feedback"`
		AestheticEnabled *bool   `json:"aesthetic_enabled"`
		RunID            *string `json:"run_id"`
		SessionID        *string `json:"session_id"`
	}
	dec := json.NewDecoder(bytes.NewReader(input))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return inputError("", CodeInputInvalid, ErrInputInvalid, "the input is a JSON object of user_input, assets, aesthetic_enabled and user_feedback: %v", err)
	}
	if in.UserFeedback != nil {
		if err := CheckFeedback(*in.UserFeedback); err != nil {
			return err
		}
		if in.UserInput == nil {
			return nil
		}
	}
	r := Request{}
	if in.UserInput != nil {
		r.Text = *in.UserInput
	}
	for i := range in.Assets {
		if err := checkLogo(in.Assets[i]); err != nil {
			return err
		}
	}
	return r.Validate()
}

// CheckFeedback validates one round's feedback: not blank, at most MaxFeedbackBytes.
func CheckFeedback(feedback string) error {
	if strings.TrimSpace(feedback) == "" {
		return inputError("user_feedback", CodeFeedbackEmpty, ErrFeedbackEmpty, "write what to change, or \"no changes\" to build the pages as they are")
	}
	if len(feedback) > MaxFeedbackBytes || !utf8.ValidString(feedback) {
		return inputError("user_feedback", CodeFeedbackTooLarge, ErrFeedbackTooLarge, "the feedback is %d bytes; at most %d bytes (%d KB) of UTF-8 text", len(feedback), MaxFeedbackBytes, MaxFeedbackBytes>>10)
	}
	return nil
}

// ResumeValue is refine_gate's resume value for feedback (seed 001 §5.2:
// Command(resume={"user_feedback": …})).
type ResumeValue struct {
	UserFeedback string `json:"user_feedback"`
}

// Resume is the command that answers refine_gate with feedback, after CheckFeedback.
func Resume(feedback string) (graph.Command, error) {
	if err := CheckFeedback(feedback); err != nil {
		return graph.Command{}, err
	}
	return graph.Resume(ResumeValue{UserFeedback: feedback}), nil
}
