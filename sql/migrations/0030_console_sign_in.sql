-- The web console's sign-in: operators' passwords (bcrypt), console sessions (only a hash of the
-- session's secret at rest), failed sign-ins (for the lockout), and the session an audit event was
-- made in.
--
-- 1. An operator's password is a bcrypt hash (made and checked by the service, off the event loop).
--    One email signs in to one operator: a password is refused for an email that already has one
--    in another tenant.
-- 2. A console session resolves to its operator's principal in the statement that makes the
--    transaction (or read session) act for it, as a token does: authenticate_console. It refuses a
--    session that is ended, idle longer than the policy's idle timeout, older than its absolute
--    lifetime, or whose operator is disabled.
-- 3. An audit event records the console session it was made in (session_id), hashed with the event
--    when present, as token_id is: events made through the API keep their canonical bytes.

CREATE TABLE operator_passwords (
    tenant_id uuid NOT NULL,
    operator_id uuid NOT NULL,
    email text NOT NULL,
    password_hash text NOT NULL CHECK (password_hash LIKE '$2%'),
    set_at timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, operator_id),
    FOREIGN KEY (tenant_id, operator_id) REFERENCES operators (tenant_id, id)
);
CREATE UNIQUE INDEX operator_passwords_email ON operator_passwords (lower(email));
ALTER TABLE operator_passwords ENABLE ROW LEVEL SECURITY;
ALTER TABLE operator_passwords FORCE ROW LEVEL SECURITY;
CREATE POLICY operator_passwords_visible ON operator_passwords USING (app_sees(tenant_id)) WITH CHECK (app_sees(tenant_id));
GRANT SELECT, INSERT, UPDATE, DELETE ON operator_passwords TO backoffice_app;

CREATE TABLE console_sessions (
    id uuid PRIMARY KEY,
    secret_hash bytea NOT NULL UNIQUE CHECK (length(secret_hash) = 32),
    tenant_id uuid NOT NULL,
    operator_id uuid NOT NULL,
    created_at timestamptz NOT NULL,
    last_seen_at timestamptz NOT NULL,
    ended_at timestamptz,
    ended_reason text CHECK (ended_reason IN ('signed_out', 'signed_out_everywhere', 'password_reset', 'operator_disabled')),
    source_ip text,
    FOREIGN KEY (tenant_id, operator_id) REFERENCES operators (tenant_id, id)
);
CREATE INDEX console_sessions_operator ON console_sessions (tenant_id, operator_id) WHERE ended_at IS NULL;
ALTER TABLE console_sessions ENABLE ROW LEVEL SECURITY;
ALTER TABLE console_sessions FORCE ROW LEVEL SECURITY;
CREATE POLICY console_sessions_visible ON console_sessions USING (app_sees(tenant_id)) WITH CHECK (app_sees(tenant_id));
GRANT SELECT, INSERT, UPDATE ON console_sessions TO backoffice_app;

-- One row per failed sign-in: by the email typed (lower case) and by the address it came from.
-- Read through console_sign_in_failures_since only; never holds a password.
CREATE TABLE console_sign_in_failures (
    email text NOT NULL,
    source_ip text NOT NULL,
    at timestamptz NOT NULL
);
CREATE INDEX console_sign_in_failures_email ON console_sign_in_failures (email, at);
CREATE INDEX console_sign_in_failures_address ON console_sign_in_failures (source_ip, at);
ALTER TABLE console_sign_in_failures ENABLE ROW LEVEL SECURITY;
ALTER TABLE console_sign_in_failures FORCE ROW LEVEL SECURITY;
CREATE POLICY console_sign_in_failures_platform ON console_sign_in_failures USING (app_is_platform()) WITH CHECK (app_is_platform());
GRANT SELECT, INSERT, DELETE ON console_sign_in_failures TO backoffice_app;

-- The operator an email signs in as, with its password hash; no row for an unknown email, a
-- service operator or one without a password. The only read of passwords across tenants.
CREATE FUNCTION console_sign_in_candidate(p_email text)
    RETURNS TABLE (tenant_id uuid, operator_id uuid, role text, status text, password_hash text)
    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
    AS $$
    SELECT o.tenant_id, o.id, o.role, o.status, p.password_hash
        FROM operator_passwords p JOIN operators o ON o.tenant_id = p.tenant_id AND o.id = p.operator_id
        WHERE lower(p.email) = lower(p_email) AND o.kind = 'person'
$$;
REVOKE ALL ON FUNCTION console_sign_in_candidate(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION console_sign_in_candidate(text) TO backoffice_app;

-- Resolves a console session (by the SHA-256 of its secret) to its principal and makes the
-- transaction (p_local) or the connection's session act for it, as authenticate_principal does for
-- a token. Refused (no row, no tenant): an unknown or ended session, one idle for p_idle_seconds,
-- one older than p_absolute_seconds, or one whose operator is not active.
CREATE FUNCTION authenticate_console(p_secret_hash bytea, p_idle_seconds integer, p_absolute_seconds integer, p_local boolean)
    RETURNS TABLE (session_id uuid, operator_id uuid, tenant_id uuid, role text)
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
    AS $$
DECLARE
    v_session uuid;
    v_operator uuid;
    v_tenant uuid;
    v_role text;
BEGIN
    PERFORM set_config('app.tenant_id', '00000000-0000-0000-0000-000000000000', p_local);
    SELECT s.id, s.operator_id, s.tenant_id, o.role INTO v_session, v_operator, v_tenant, v_role
        FROM console_sessions s
        JOIN operators o ON o.tenant_id = s.tenant_id AND o.id = s.operator_id
        WHERE s.secret_hash = p_secret_hash AND s.ended_at IS NULL AND o.status = 'active'
          AND s.last_seen_at > now() - make_interval(secs => p_idle_seconds)
          AND s.created_at > now() - make_interval(secs => p_absolute_seconds);
    IF v_session IS NULL THEN
        PERFORM set_config('app.tenant_id', '', p_local);
        PERFORM set_config('app.role', '', p_local);
        RETURN;
    END IF;
    UPDATE console_sessions SET last_seen_at = now()
        WHERE id = (SELECT id FROM console_sessions WHERE id = v_session AND last_seen_at < now() - interval '10 seconds'
                    FOR UPDATE SKIP LOCKED);
    PERFORM set_config('app.tenant_id', v_tenant::text, p_local);
    PERFORM set_config('app.role', v_role, p_local);
    RETURN QUERY SELECT v_session, v_operator, v_tenant, v_role;
END
$$;
REVOKE ALL ON FUNCTION authenticate_console(bytea, integer, integer, boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION authenticate_console(bytea, integer, integer, boolean) TO backoffice_app;

-- Audit events record the console session they were made in.
ALTER TABLE audit_events ADD COLUMN session_id uuid;

CREATE FUNCTION audit_canonical(
    p_chain text, p_seq bigint, p_tenant uuid, p_occurred_at timestamptz, p_actor_id uuid, p_actor_role text,
    p_action text, p_target_type text, p_target_id text, p_request_id text, p_source_ip text, p_reason text,
    p_before jsonb, p_after jsonb, p_policy_digest text, p_token_id uuid, p_session_id uuid
) RETURNS bytea
    LANGUAGE sql IMMUTABLE
    SET search_path = pg_catalog, pg_temp
    AS $$
    SELECT convert_to((convert_from(public.audit_canonical(p_chain, p_seq, p_tenant, p_occurred_at, p_actor_id, p_actor_role, p_action,
            p_target_type, p_target_id, p_request_id, p_source_ip, p_reason, p_before, p_after, p_policy_digest, p_token_id), 'UTF8')::jsonb
        || CASE WHEN p_session_id IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('session_id', p_session_id) END)::text, 'UTF8')
$$;

DROP FUNCTION audit_append(uuid, uuid, text, text, text, text, text, text, text, jsonb, jsonb, text, uuid);
CREATE FUNCTION audit_append(
    p_tenant uuid, p_actor_id uuid, p_actor_role text, p_action text, p_target_type text, p_target_id text,
    p_request_id text, p_source_ip text, p_reason text, p_before jsonb, p_after jsonb, p_policy_digest text,
    p_token_id uuid, p_session_id uuid DEFAULT NULL  -- the default keeps audit_archive_through's call (no session)
) RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = public, pg_temp
    AS $$
DECLARE
    v_chain text;
    v_seq bigint;
    v_prev bytea;
    v_at timestamptz;
    v_canonical bytea;
    v_hash bytea;
    v_id bigint;
BEGIN
    IF p_tenant IS NULL OR NOT app_sees(p_tenant) THEN
        RAISE EXCEPTION 'audit_append: this transaction does not act for tenant %', p_tenant USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF p_tenant = '00000000-0000-0000-0000-000000000000' THEN
        v_chain := 'platform:' || lpad((get_byte(sha256(convert_to(p_target_id, 'UTF8')), 0) % 16)::text, 2, '0');
    ELSE
        v_chain := 'tenant:' || p_tenant::text;
    END IF;
    INSERT INTO audit_chain_heads AS h (tenant_id, chain, seq, hash)
        VALUES (p_tenant, v_chain, 1, '\x0000000000000000000000000000000000000000000000000000000000000000'::bytea)
        ON CONFLICT (tenant_id, chain) DO UPDATE SET seq = h.seq + 1
        RETURNING h.seq, h.hash INTO v_seq, v_prev;
    v_at := clock_timestamp();  -- read under the head's lock: later in a chain is never earlier in time
    v_canonical := audit_canonical(v_chain, v_seq, p_tenant, v_at, p_actor_id, p_actor_role, p_action, p_target_type,
        p_target_id, p_request_id, p_source_ip, p_reason, p_before, p_after, p_policy_digest, p_token_id, p_session_id);
    v_hash := sha256(v_prev || v_canonical);
    UPDATE audit_chain_heads SET hash = v_hash WHERE tenant_id = p_tenant AND chain = v_chain;
    INSERT INTO audit_events (tenant_id, chain, seq, occurred_at, actor_id, actor_role, action, target_type, target_id,
        request_id, source_ip, reason, before, after, policy_digest, canonical, prev_hash, hash, token_id, session_id)
        VALUES (p_tenant, v_chain, v_seq, v_at, p_actor_id, p_actor_role, p_action, p_target_type, p_target_id,
        p_request_id, p_source_ip, p_reason, p_before, p_after, p_policy_digest, v_canonical, v_prev, v_hash, p_token_id, p_session_id)
        RETURNING id INTO v_id;
    RETURN v_id;
END
$$;
REVOKE ALL ON FUNCTION audit_append(uuid, uuid, text, text, text, text, text, text, text, jsonb, jsonb, text, uuid, uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION audit_append(uuid, uuid, text, text, text, text, text, text, text, jsonb, jsonb, text, uuid, uuid) TO backoffice_app;
