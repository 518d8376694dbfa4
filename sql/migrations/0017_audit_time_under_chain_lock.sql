-- An event's occurred_at is read after its chain head is locked, so within a chain a later seq
-- never has an earlier time. It used to be read as audit_append began, before the lock: two
-- appends to one lane could then take seqs in the opposite order of their times, and a period's
-- export (`audit export --since --until`, what ops/audit-daily archives every day) could hold an
-- event whose predecessor fell in the other period. Events already stored keep their times.

CREATE OR REPLACE FUNCTION audit_append(
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
        ON CONFLICT (chain) DO UPDATE SET seq = h.seq + 1
        RETURNING h.seq, h.hash INTO v_seq, v_prev;
    v_at := clock_timestamp();  -- read under the head's lock: later in a chain is never earlier in time
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
