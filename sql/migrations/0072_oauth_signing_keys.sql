-- The generations of the key that signs OAuth access tokens. A generation's key is derived from the
-- server's key and its number (no key is stored); rotating retires the current generation and adds the
-- next. A retired generation stays published (/.well-known/jwks.json) and accepted while tokens it
-- signed may live (their 15 minutes, with a margin), then the service refuses it.
CREATE TABLE oauth_signing_keys (
    generation integer PRIMARY KEY CHECK (generation > 0),
    created_at timestamptz NOT NULL,
    retired_at timestamptz
);
CREATE UNIQUE INDEX oauth_signing_keys_one_current ON oauth_signing_keys ((true)) WHERE retired_at IS NULL;
INSERT INTO oauth_signing_keys (generation, created_at) VALUES (1, now());

ALTER TABLE oauth_signing_keys ENABLE ROW LEVEL SECURITY;
ALTER TABLE oauth_signing_keys FORCE ROW LEVEL SECURITY;
CREATE POLICY oauth_signing_keys_platform_only ON oauth_signing_keys
    USING (app_is_platform()) WITH CHECK (app_is_platform());
GRANT SELECT, INSERT, UPDATE ON oauth_signing_keys TO backoffice_app;
