package platform

import (
	"context"

	"weft/internal/auth"
)

// The demo's tenants: the one with the running demo, and a second one so
// that tenant isolation can be seen.
const (
	DemoTenant  = "demo"
	OtherTenant = "acme"
)

// SeedDemo loads the demo tenants and each workflow's demo data into them (Demos), unless the
// demo tenant exists; the demos start the demo tenant's runs. It reports whether it loaded
// anything.
func (a *App) SeedDemo(ctx context.Context) (bool, error) {
	exists, err := a.Tenants.Exists(ctx, DemoTenant)
	if err != nil || exists {
		return false, err
	}
	for _, t := range []struct{ id, name string }{{DemoTenant, "Demo Procurement Co."}, {OtherTenant, "Acme Holdings"}} {
		if err := a.Tenants.Create(ctx, t.id, t.name); err != nil {
			return false, err
		}
	}
	for _, demo := range a.Demos {
		if err := demo(ctx); err != nil {
			return true, err
		}
	}
	return true, nil
}

// SeedDemoAll loads the demo data (and starts its runs) and the demo
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
