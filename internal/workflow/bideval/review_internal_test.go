package bideval

import (
	"fmt"
	"slices"
	"testing"

	"weft/internal/workflow"
)

// A chunk the explanation names is highlighted as cited in the review form, even when it
// backs a finding against the bid rather than a credited claim.
func TestCriterionChunksCitedAndNamed(t *testing.T) {
	cs := CriterionScore{CriterionID: "C2", Citations: []string{"doc#1"},
		Explanation: "Credited: 24/7 support [doc#1]. Against the rubric: response time 8 hours [doc#2]."}
	ev := Evidence{ChunkIDs: []string{"doc#3", "doc#2", "doc#1"}, Scores: []float64{0.9, 0.8, 0.7}}
	chunks := map[string]RetrievedChunk{}
	for _, id := range ev.ChunkIDs {
		chunks[id] = RetrievedChunk{ChunkID: id, Document: "proposal", Text: "text of " + id}
	}
	got := criterionEvidence(State{EvidenceBundle: map[string]Evidence{"C2": ev}}, cs, chunks, nil)
	// The score rests on its citation (cited); the chunk the explanation names against the
	// rubric is a shortfall (named), not cited; then the rest.
	var order []string
	for _, c := range got {
		order = append(order, fmt.Sprintf("%s cited=%v named=%v", c.ID, c.Mark == workflow.MarkCited, c.Mark == workflow.MarkShortfall))
	}
	want := []string{"doc#1 cited=true named=false", "doc#2 cited=false named=true", "doc#3 cited=false named=false"}
	if !slices.Equal(order, want) {
		t.Fatalf("chunks:\n%q\nwant\n%q", order, want)
	}
}
