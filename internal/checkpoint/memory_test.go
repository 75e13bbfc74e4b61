package checkpoint_test

import (
	"testing"

	"weft/internal/checkpoint"
	"weft/internal/checkpoint/checkpointtest"
	"weft/internal/graph"
)

func TestMemoryConformance(t *testing.T) {
	t.Parallel()
	checkpointtest.Run(t, func(*testing.T) graph.Checkpointer { return checkpoint.NewMemory() })
}
