-- OAuth clients that authenticate with a signed assertion (`private_key_jwt`, RFC 7523 §2.2)
-- instead of a secret: the client keeps its Ed25519 private key; the service holds only the public
-- keys (`public_keys`, each the JWK's `x`, base64url; at most two, for the client's own rotation).
-- Such a client has no secret. Each assertion's `jti` is recorded until the assertion expires, so
-- a captured assertion cannot be replayed.
ALTER TABLE oauth_clients ALTER COLUMN secret_hash DROP NOT NULL;
ALTER TABLE oauth_clients ADD COLUMN public_keys text[]
    CHECK (public_keys IS NULL OR cardinality(public_keys) BETWEEN 1 AND 2);
ALTER TABLE oauth_clients ADD CONSTRAINT oauth_clients_one_method
    CHECK ((secret_hash IS NULL) <> (public_keys IS NULL));

CREATE TABLE oauth_client_assertions (
    tenant_id uuid NOT NULL,
    client_id uuid NOT NULL,
    jti text NOT NULL CHECK (length(jti) BETWEEN 1 AND 200),
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, client_id, jti),
    FOREIGN KEY (tenant_id, client_id) REFERENCES oauth_clients (tenant_id, id)
);
CREATE INDEX oauth_client_assertions_expiry ON oauth_client_assertions (expires_at);

ALTER TABLE oauth_client_assertions ENABLE ROW LEVEL SECURITY;
ALTER TABLE oauth_client_assertions FORCE ROW LEVEL SECURITY;
CREATE POLICY oauth_client_assertions_visible ON oauth_client_assertions
    USING (app_sees(tenant_id)) WITH CHECK (app_sees(tenant_id));
GRANT SELECT, INSERT, DELETE ON oauth_client_assertions TO backoffice_app;
