-- An operator's saved views of the orders board: a name and the board's filter (state, placed
-- range, SKU, total range). Each operator sees and changes only its own (row-level security by
-- tenant and by the operator the transaction acts for, `app_operator()`).
CREATE TABLE order_views (
    tenant_id uuid NOT NULL REFERENCES tenants (id),
    id uuid NOT NULL,
    operator_id uuid NOT NULL,
    name text NOT NULL CHECK (length(name) BETWEEN 1 AND 60),
    status text CHECK (length(status) <= 30),
    placed_from timestamptz,
    placed_to timestamptz,
    sku text CHECK (length(sku) BETWEEN 1 AND 64),
    total_min_cents bigint CHECK (total_min_cents >= 0),
    total_max_cents bigint CHECK (total_max_cents >= 0),
    created_at timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, id)
);
CREATE UNIQUE INDEX order_views_name ON order_views (tenant_id, operator_id, lower(name));
CREATE INDEX order_views_id ON order_views (id);
ALTER TABLE order_views ENABLE ROW LEVEL SECURITY;
ALTER TABLE order_views FORCE ROW LEVEL SECURITY;
CREATE POLICY order_views_own ON order_views
    USING (app_sees(tenant_id) AND operator_id = app_operator())
    WITH CHECK (app_sees(tenant_id) AND operator_id = app_operator());
GRANT SELECT, INSERT, DELETE ON order_views TO backoffice_app;
