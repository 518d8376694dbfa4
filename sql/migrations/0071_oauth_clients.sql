-- OAuth 2.0 clients (RFC 6749 §4.4, client credentials): a machine client of one tenant (the
-- platform's, or a partner's shop) acts as a service operator of its own, with the scopes it was
-- registered with (a subset of its role's) and optionally from some networks only. Its secret is
-- kept as SHA-256 only. `POST /oauth/token` exchanges the credentials for a 15-minute access token,
-- a signed JWT that is also a row of `tokens` (by its hash, with `client_id`): it authenticates,
-- is narrowed and revoked like any token, and revoking the client revokes its live tokens.
CREATE TABLE oauth_clients (
    tenant_id uuid NOT NULL REFERENCES tenants (id),
    id uuid NOT NULL,
    operator_id uuid NOT NULL,
    name text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
    role text NOT NULL,
    secret_hash bytea NOT NULL UNIQUE CHECK (length(secret_hash) = 32),
    scopes text[] NOT NULL CHECK (cardinality(scopes) BETWEEN 1 AND 100),
    allowed_addresses cidr[] CHECK (allowed_addresses IS NULL OR cardinality(allowed_addresses) BETWEEN 1 AND 20),
    created_at timestamptz NOT NULL,
    revoked_at timestamptz,
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, operator_id) REFERENCES operators (tenant_id, id)
);
CREATE UNIQUE INDEX oauth_clients_id ON oauth_clients (id);

ALTER TABLE oauth_clients ENABLE ROW LEVEL SECURITY;
ALTER TABLE oauth_clients FORCE ROW LEVEL SECURITY;
CREATE POLICY oauth_clients_visible ON oauth_clients USING (app_sees(tenant_id)) WITH CHECK (app_sees(tenant_id));
GRANT SELECT, INSERT, UPDATE ON oauth_clients TO backoffice_app;

ALTER TABLE tokens ADD COLUMN client_id uuid;
CREATE INDEX tokens_client ON tokens (client_id) WHERE client_id IS NOT NULL AND revoked_at IS NULL;
