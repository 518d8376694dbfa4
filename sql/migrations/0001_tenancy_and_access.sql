-- Tenancy, operators, API tokens and idempotency keys.
-- The service connects as backoffice_app, which owns no table, so row-level security applies to it.
-- Each transaction sets app.tenant_id (and app.role); the platform tenant (all zeros) sees every tenant.

DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'backoffice_app') THEN
        CREATE ROLE backoffice_app LOGIN;
    END IF;
END
$$;

GRANT USAGE ON SCHEMA public TO backoffice_app;

-- The tenant this transaction acts for (NULL when unset: such a session sees nothing).
CREATE FUNCTION app_tenant() RETURNS uuid
    LANGUAGE sql STABLE
    AS $$ SELECT nullif(current_setting('app.tenant_id', true), '')::uuid $$;

-- True when the transaction acts for the platform (platform roles see every tenant).
CREATE FUNCTION app_is_platform() RETURNS boolean
    LANGUAGE sql STABLE
    AS $$ SELECT coalesce(current_setting('app.tenant_id', true), '') = '00000000-0000-0000-0000-000000000000' $$;

-- Row visibility for tenant-owned rows.
CREATE FUNCTION app_sees(row_tenant uuid) RETURNS boolean
    LANGUAGE sql STABLE
    AS $$ SELECT row_tenant = app_tenant() OR app_is_platform() $$;

CREATE TABLE tenants (
    id uuid PRIMARY KEY,
    slug text NOT NULL UNIQUE CHECK (slug ~ '^[a-z0-9][a-z0-9-]{1,62}$'),
    name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    created_at timestamptz NOT NULL DEFAULT now(),
    version bigint NOT NULL DEFAULT 1
);
INSERT INTO tenants (id, slug, name) VALUES ('00000000-0000-0000-0000-000000000000', 'platform', 'HealthTrack platform');

ALTER TABLE tenants ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenants_visible ON tenants USING (app_sees(id)) WITH CHECK (app_is_platform());
GRANT SELECT, INSERT, UPDATE ON tenants TO backoffice_app;

CREATE TABLE operators (
    tenant_id uuid NOT NULL REFERENCES tenants (id),
    id uuid NOT NULL,
    email text NOT NULL CHECK (length(email) BETWEEN 3 AND 254),
    role text NOT NULL,
    kind text NOT NULL CHECK (kind IN ('person', 'service')),
    status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'disabled')),
    created_at timestamptz NOT NULL DEFAULT now(),
    disabled_at timestamptz,
    version bigint NOT NULL DEFAULT 1,
    PRIMARY KEY (tenant_id, id)
);
CREATE UNIQUE INDEX operators_email ON operators (tenant_id, lower(email));
CREATE UNIQUE INDEX operators_id ON operators (id);

ALTER TABLE operators ENABLE ROW LEVEL SECURITY;
CREATE POLICY operators_visible ON operators USING (app_sees(tenant_id)) WITH CHECK (app_sees(tenant_id));
GRANT SELECT, INSERT, UPDATE ON operators TO backoffice_app;

CREATE TABLE tokens (
    tenant_id uuid NOT NULL,
    id uuid NOT NULL,
    operator_id uuid NOT NULL,
    name text NOT NULL,
    secret_hash bytea NOT NULL UNIQUE,
    role text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    last_used_at timestamptz,
    revoked_at timestamptz,
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, operator_id) REFERENCES operators (tenant_id, id)
);
CREATE UNIQUE INDEX tokens_id ON tokens (id);

ALTER TABLE tokens ENABLE ROW LEVEL SECURITY;
CREATE POLICY tokens_visible ON tokens USING (app_sees(tenant_id)) WITH CHECK (app_sees(tenant_id));
GRANT SELECT, INSERT, UPDATE ON tokens TO backoffice_app;

-- Resolves a presented token (by its SHA-256) to its principal before any tenant is known.
-- SECURITY DEFINER so the service never needs to read other tenants' tokens; refuses revoked or
-- expired tokens and tokens of disabled operators at once. Touches last_used_at at most once a minute.
CREATE FUNCTION authenticate_token(p_secret_hash bytea)
    RETURNS TABLE (token_id uuid, operator_id uuid, tenant_id uuid, role text)
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
    AS $$
BEGIN
    RETURN QUERY
        SELECT t.id, t.operator_id, t.tenant_id, t.role
        FROM tokens t
        JOIN operators o ON o.tenant_id = t.tenant_id AND o.id = t.operator_id
        WHERE t.secret_hash = p_secret_hash AND t.revoked_at IS NULL AND t.expires_at > now() AND o.status = 'active';
    IF FOUND THEN
        UPDATE tokens SET last_used_at = now()
        WHERE secret_hash = p_secret_hash AND (last_used_at IS NULL OR last_used_at < now() - interval '60 seconds');
    END IF;
END
$$;
REVOKE ALL ON FUNCTION authenticate_token(bytea) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION authenticate_token(bytea) TO backoffice_app;

-- Idempotency-Key records: scoped to the principal, kept 24 hours, written in the change's transaction.
CREATE TABLE idempotency_keys (
    tenant_id uuid NOT NULL,
    principal_id uuid NOT NULL,
    key text NOT NULL,
    request_hash bytea NOT NULL,
    status integer NOT NULL,
    body bytea NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, principal_id, key)
);
ALTER TABLE idempotency_keys ENABLE ROW LEVEL SECURITY;
CREATE POLICY idempotency_keys_visible ON idempotency_keys USING (app_sees(tenant_id)) WITH CHECK (app_sees(tenant_id));
GRANT SELECT, INSERT, UPDATE, DELETE ON idempotency_keys TO backoffice_app;
