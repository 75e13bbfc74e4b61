package runner

import "weft/internal/usertext"

// StorableJSON is usertext.StorableJSON: why PostgreSQL's jsonb would refuse b.
func StorableJSON(b []byte) error { return usertext.StorableJSON(b) }
