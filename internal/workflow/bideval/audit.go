package bideval

// The audit actions bid evaluation writes (besides the platform's: run starts, resumes,
// retries), each on the evaluation's id, which is its thread's.
const (
	ActionEvaluationStart  = "evaluation.start"  // a run of the evaluation started
	ActionEvaluationReport = "evaluation.report" // persist_result stored a report
	ActionDocumentUpload   = "document.upload"   // a bid document added to the supplier's bid
	ActionDocumentWithdraw = "document.withdraw" // a bid document withdrawn
	ActionDocumentRestore  = "document.restore"  // a withdrawn bid document restored
	// Tender setup, on the tender's id.
	ActionTenderCreate    = "tender.create"     // a tender created
	ActionRulePackVersion = "rule_pack.version" // a rule pack version written (form, YAML or API) and pinned
	ActionSupplierAdd     = "supplier.add"      // a supplier added to a tender
	ActionSupplierRename  = "supplier.rename"   // a supplier renamed
)

// AuditActions are the audit actions bid evaluation writes, for the audit log's filter.
var AuditActions = []string{ActionEvaluationStart, ActionEvaluationReport, ActionDocumentUpload, ActionDocumentWithdraw,
	ActionDocumentRestore, ActionTenderCreate, ActionRulePackVersion, ActionSupplierAdd, ActionSupplierRename}
