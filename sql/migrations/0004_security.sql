-- Defence in depth.
--
-- 1. The audit log can be written only through audit_append, a SECURITY DEFINER function with a
--    pinned search_path that chooses the chain, computes seq, prev_hash and hash itself and refuses
--    a tenant the transaction does not act for. The service role gets no direct write on
--    audit_events or audit_chain_heads, so it can neither forge an event nor rewind a chain head.
-- 2. Every event records the credential used (token_id); it is hashed with the event when present
--    (events written before this migration, without it, keep their canonical bytes).
-- 3. Row-level security is FORCEd on every table, so even the tables' owner obeys it.
-- 4. Retention: the service may delete old login attempts (maintenance purge).

ALTER TABLE audit_events ADD COLUMN token_id uuid;

DROP FUNCTION audit_append(text, uuid, uuid, text, text, text, text, text, text, text, jsonb, jsonb, text);
DROP FUNCTION audit_canonical(text, bigint, uuid, timestamptz, uuid, text, text, text, text, text, text, text, jsonb, jsonb, text);

-- The canonical bytes of an event: jsonb's text form (keys in a fixed order) of every field but the
-- hashes; token_id is included only when present.
CREATE FUNCTION audit_canonical(
    p_chain text, p_seq bigint, p_tenant uuid, p_occurred_at timestamptz, p_actor_id uuid, p_actor_role text,
    p_action text, p_target_type text, p_target_id text, p_request_id text, p_source_ip text, p_reason text,
    p_before jsonb, p_after jsonb, p_policy_digest text, p_token_id uuid
) RETURNS bytea
    LANGUAGE sql IMMUTABLE
    SET search_path = pg_catalog, pg_temp
    AS $$
    SELECT convert_to((jsonb_build_object(
        'chain', p_chain, 'seq', p_seq, 'tenant_id', p_tenant,
        'occurred_at', to_char(p_occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
        'actor_id', p_actor_id, 'actor_role', p_actor_role, 'action', p_action,
        'target_type', p_target_type, 'target_id', p_target_id, 'request_id', p_request_id,
        'source_ip', p_source_ip, 'reason', p_reason, 'before', p_before, 'after', p_after,
        'policy_digest', p_policy_digest)
        || CASE WHEN p_token_id IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('token_id', p_token_id) END)::text, 'UTF8')
$$;

-- Appends one event in the caller's transaction and returns its id. The chain is the tenant's own,
-- or for the platform one of 16 lanes chosen by the first byte of SHA-256(target id). The head row
-- is created or advanced with one INSERT … ON CONFLICT DO UPDATE, which locks it until commit:
-- appends to one chain are serialised and a chain never forks.
CREATE FUNCTION audit_append(
    p_tenant uuid, p_actor_id uuid, p_actor_role text, p_action text, p_target_type text, p_target_id text,
    p_request_id text, p_source_ip text, p_reason text, p_before jsonb, p_after jsonb, p_policy_digest text,
    p_token_id uuid
) RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = public, pg_temp
    AS $$
DECLARE
    v_chain text;
    v_seq bigint;
    v_prev bytea;
    v_at timestamptz := clock_timestamp();
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
        ON CONFLICT (chain) DO UPDATE SET seq = h.seq + 1
        RETURNING h.seq, h.hash INTO v_seq, v_prev;
    v_canonical := audit_canonical(v_chain, v_seq, p_tenant, v_at, p_actor_id, p_actor_role, p_action, p_target_type,
        p_target_id, p_request_id, p_source_ip, p_reason, p_before, p_after, p_policy_digest, p_token_id);
    v_hash := sha256(v_prev || v_canonical);
    UPDATE audit_chain_heads SET hash = v_hash WHERE chain = v_chain;
    INSERT INTO audit_events (tenant_id, chain, seq, occurred_at, actor_id, actor_role, action, target_type, target_id,
        request_id, source_ip, reason, before, after, policy_digest, canonical, prev_hash, hash, token_id)
        VALUES (p_tenant, v_chain, v_seq, v_at, p_actor_id, p_actor_role, p_action, p_target_type, p_target_id,
        p_request_id, p_source_ip, p_reason, p_before, p_after, p_policy_digest, v_canonical, v_prev, v_hash, p_token_id)
        RETURNING id INTO v_id;
    RETURN v_id;
END
$$;
REVOKE ALL ON FUNCTION audit_append(uuid, uuid, text, text, text, text, text, text, text, jsonb, jsonb, text, uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION audit_append(uuid, uuid, text, text, text, text, text, text, text, jsonb, jsonb, text, uuid) TO backoffice_app;

REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON audit_events FROM backoffice_app;
REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON audit_chain_heads FROM backoffice_app;

-- authenticate_token runs before any tenant is known: it acts for the platform for its own two
-- statements and restores the caller's setting, so it works under FORCEd row-level security too.
CREATE OR REPLACE FUNCTION authenticate_token(p_secret_hash bytea)
    RETURNS TABLE (token_id uuid, operator_id uuid, tenant_id uuid, role text)
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
    AS $$
DECLARE
    v_caller text := current_setting('app.tenant_id', true);
BEGIN
    PERFORM set_config('app.tenant_id', '00000000-0000-0000-0000-000000000000', true);
    RETURN QUERY
        SELECT t.id, t.operator_id, t.tenant_id, t.role
        FROM tokens t
        JOIN operators o ON o.tenant_id = t.tenant_id AND o.id = t.operator_id
        WHERE t.secret_hash = p_secret_hash AND t.revoked_at IS NULL AND t.expires_at > now() AND o.status = 'active';
    IF FOUND THEN
        UPDATE tokens SET last_used_at = now()
        WHERE secret_hash = p_secret_hash AND (last_used_at IS NULL OR last_used_at < now() - interval '60 seconds');
    END IF;
    PERFORM set_config('app.tenant_id', coalesce(v_caller, ''), true);
END
$$;

ALTER TABLE tenants FORCE ROW LEVEL SECURITY;
ALTER TABLE operators FORCE ROW LEVEL SECURITY;
ALTER TABLE tokens FORCE ROW LEVEL SECURITY;
ALTER TABLE idempotency_keys FORCE ROW LEVEL SECURITY;
ALTER TABLE audit_chain_heads FORCE ROW LEVEL SECURITY;
ALTER TABLE audit_events FORCE ROW LEVEL SECURITY;
ALTER TABLE customers FORCE ROW LEVEL SECURITY;
ALTER TABLE account_locks FORCE ROW LEVEL SECURITY;
ALTER TABLE login_attempts FORCE ROW LEVEL SECURITY;
ALTER TABLE appeals FORCE ROW LEVEL SECURITY;

GRANT DELETE ON login_attempts TO backoffice_app;
CREATE INDEX login_attempts_occurred ON login_attempts (occurred_at);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
