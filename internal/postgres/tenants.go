package postgres

import (
	"context"
	"errors"
	"fmt"

	"weft/db"
	"weft/internal/graph"
)

// Tenants are the tenants whose data the database holds (table tenants): every row of a
// workflow's data, every job and every user belongs to one.
type Tenants struct {
	db *DB
}

// NewTenants returns the tenants on d.
func NewTenants(d *DB) *Tenants { return &Tenants{db: d} }

// Create creates a tenant, or renames it when it exists.
func (t *Tenants) Create(ctx context.Context, id, name string) error {
	if err := t.db.querier(ctx).TenantUpsert(ctx, db.TenantUpsertParams{ID: id, Name: name}); err != nil {
		return fmt.Errorf("create tenant: %w", translate(err))
	}
	return nil
}

// Exists reports whether the tenant exists.
func (t *Tenants) Exists(ctx context.Context, id string) (bool, error) {
	_, err := t.db.querier(ctx).TenantGet(ctx, id)
	switch err := translate(err); {
	case err == nil:
		return true, nil
	case errors.Is(err, graph.ErrNotFound):
		return false, nil
	default:
		return false, fmt.Errorf("look up tenant: %w", err)
	}
}

// List lists the tenant ids.
func (t *Tenants) List(ctx context.Context) ([]string, error) {
	rows, err := t.db.q.TenantList(ctx)
	if err != nil {
		return nil, fmt.Errorf("list tenants: %w", translate(err))
	}
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.ID
	}
	return out, nil
}
