-- Webhook endpoints: where a partner wants its shop's events sent (the URL, checked to reach only a
-- public address; the event types it wants). Tenant-owned: every key leads with tenant_id, and
-- row-level security keeps each tenant to its own rows.
--
-- The signing secret is stored nowhere: it is derived from the server's key, the endpoint's id and
-- its `secret_generation` (WebhookEndpointSecrets), shown once when made or rolled. During a roll's
-- overlap the previous generation signs too, until `previous_secret_until`.
CREATE TABLE webhook_endpoints (
    tenant_id uuid NOT NULL REFERENCES tenants (id),
    id uuid NOT NULL,
    url text NOT NULL CHECK (length(url) BETWEEN 8 AND 2048),
    description text NOT NULL DEFAULT '' CHECK (length(description) <= 200),
    events text[] NOT NULL CHECK (cardinality(events) BETWEEN 1 AND 20),
    status text NOT NULL DEFAULT 'enabled' CHECK (status IN ('enabled', 'disabled')),
    secret_generation integer NOT NULL DEFAULT 1 CHECK (secret_generation >= 1),
    previous_secret_until timestamptz,
    version integer NOT NULL DEFAULT 1,
    created_at timestamptz NOT NULL,
    created_by uuid,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, id)
);
CREATE INDEX webhook_endpoints_newest ON webhook_endpoints (tenant_id, created_at DESC, id DESC);

ALTER TABLE webhook_endpoints ENABLE ROW LEVEL SECURITY;
ALTER TABLE webhook_endpoints FORCE ROW LEVEL SECURITY;
CREATE POLICY webhook_endpoints_visible ON webhook_endpoints USING (app_sees(tenant_id)) WITH CHECK (app_sees(tenant_id));
GRANT SELECT, INSERT, UPDATE ON webhook_endpoints TO backoffice_app;
