package bideval

// The audit actions bid evaluation writes (besides the platform's: run starts, resumes,
// retries), each on the evaluation's id, which is its thread's.
const (
	ActionEvaluationStart  = "evaluation.start"  // a run of the evaluation started
	ActionEvaluationReport = "evaluation.report" // persist_result stored a report
	ActionDocumentUpload   = "document.upload"   // a bid document added to the supplier's bid
	ActionDocumentWithdraw = "document.withdraw" // a bid document withdrawn
	ActionDocumentRestore  = "document.restore"  // a withdrawn bid document restored
)

// AuditActions are the audit actions bid evaluation writes, for the audit log's filter.
var AuditActions = []string{ActionEvaluationStart, ActionEvaluationReport, ActionDocumentUpload, ActionDocumentWithdraw,
	ActionDocumentRestore}
