-- name: EvaluationReportInsert :one
INSERT INTO evaluation_reports (evaluation_id, report_version, tenant_id, payload) VALUES ($1, $2, $3, $4)
ON CONFLICT (evaluation_id, report_version) DO NOTHING
RETURNING report_version;

-- name: EvaluationReportLatest :one
SELECT * FROM evaluation_reports WHERE tenant_id = $1 AND evaluation_id = $2 ORDER BY report_version DESC LIMIT 1;
