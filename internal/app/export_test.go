package app

// SetPrunePage sets how many finished threads one Prune step of a takes, for a test.
func (a *App) SetPrunePage(n int) { a.prunePage = n }
