package page

// WorkflowStartVM is the form that starts a run of a workflow.
type WorkflowStartVM struct {
	Name, Title, Description string
	Action                   string // where the form posts
	Input                    string // the input as typed (or the workflow's example)
	Error                    string // why the last submission was refused
	ErrorCode                string
	CSRF                     string
	DraftKey                 string // where the browser keeps what is typed (drafts.js)
}
