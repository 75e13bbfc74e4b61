package app

import (
	"context"

	"weft/internal/auth"
)

// SeedDemoAll loads the demo data (and starts its evaluations) and the demo
// users. It reports whether the data was loaded now.
func (a *App) SeedDemoAll(ctx context.Context, authSvc *auth.Service) (bool, error) {
	loaded, err := a.SeedDemo(ctx) // creates both demo tenants
	if err != nil {
		return loaded, err
	}
	for _, u := range auth.DemoUsers(DemoTenant, OtherTenant) {
		if err := authSvc.CreateUser(ctx, u, auth.DemoPassword); err != nil {
			return loaded, err
		}
	}
	return loaded, nil
}
