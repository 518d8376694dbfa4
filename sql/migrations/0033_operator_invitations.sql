-- Invitations: a one-time console link where an operator sets its password. The link's secret
-- exists only in the response that delivers it; the database keeps its SHA-256. A link is valid
-- 24 hours, once; a new invitation supersedes the operator's unused ones.

CREATE TABLE operator_invitations (
    id uuid PRIMARY KEY,
    tenant_id uuid NOT NULL,
    operator_id uuid NOT NULL,
    secret_hash bytea NOT NULL UNIQUE CHECK (length(secret_hash) = 32),
    created_by uuid,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    used_at timestamptz,
    superseded_at timestamptz,
    FOREIGN KEY (tenant_id, operator_id) REFERENCES operators (tenant_id, id)
);
CREATE INDEX operator_invitations_operator ON operator_invitations (tenant_id, operator_id) WHERE used_at IS NULL AND superseded_at IS NULL;
ALTER TABLE operator_invitations ENABLE ROW LEVEL SECURITY;
ALTER TABLE operator_invitations FORCE ROW LEVEL SECURITY;
CREATE POLICY operator_invitations_visible ON operator_invitations USING (app_sees(tenant_id)) WITH CHECK (app_sees(tenant_id));
GRANT SELECT, INSERT, UPDATE ON operator_invitations TO backoffice_app;

-- The open invitation a link's secret names (unused, not superseded, not expired at p_now, its
-- operator an active person), with whom it invites; no row otherwise. Read before anyone is
-- signed in, so it crosses tenants: the only read of invitations that does.
CREATE FUNCTION operator_invitation(p_secret_hash bytea, p_now timestamptz)
    RETURNS TABLE (invitation_id uuid, tenant_id uuid, operator_id uuid, email text, role text, expires_at timestamptz)
    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
    AS $$
    SELECT i.id, i.tenant_id, i.operator_id, o.email, o.role, i.expires_at
        FROM operator_invitations i JOIN operators o ON o.tenant_id = i.tenant_id AND o.id = i.operator_id
        WHERE i.secret_hash = p_secret_hash AND i.used_at IS NULL AND i.superseded_at IS NULL AND i.expires_at > p_now
          AND o.status = 'active' AND o.kind = 'person'
$$;
REVOKE ALL ON FUNCTION operator_invitation(bytea, timestamptz) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION operator_invitation(bytea, timestamptz) TO backoffice_app;
