package app

// SetPrunePage sets how many threads one Prune step takes, for a test; it returns a func
// that restores it.
func SetPrunePage(n int) func() {
	old := prunePage
	prunePage = n
	return func() { prunePage = old }
}
