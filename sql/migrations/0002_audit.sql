-- The append-only, hash-chained audit log.
-- One chain per tenant ('tenant:<uuid>'); the platform's events spread over 16 lanes chosen by
-- target ('platform:00' … 'platform:15'), so changes to different accounts never queue on one head.
-- hash = sha256(prev_hash || canonical), where canonical is the exact bytes hashed and is stored.

CREATE TABLE audit_chain_heads (
    tenant_id uuid NOT NULL,
    chain text NOT NULL,
    seq bigint NOT NULL,
    hash bytea NOT NULL,
    PRIMARY KEY (chain)
);
ALTER TABLE audit_chain_heads ENABLE ROW LEVEL SECURITY;
CREATE POLICY audit_chain_heads_visible ON audit_chain_heads USING (app_sees(tenant_id)) WITH CHECK (app_sees(tenant_id));
GRANT SELECT, INSERT, UPDATE ON audit_chain_heads TO backoffice_app;

CREATE TABLE audit_events (
    tenant_id uuid NOT NULL,
    id bigint GENERATED ALWAYS AS IDENTITY,
    chain text NOT NULL,
    seq bigint NOT NULL,
    occurred_at timestamptz NOT NULL,
    actor_id uuid,
    actor_role text NOT NULL,
    action text NOT NULL,
    target_type text NOT NULL,
    target_id text NOT NULL,
    request_id text NOT NULL,
    source_ip text,
    reason text,
    before jsonb,
    after jsonb,
    policy_digest text NOT NULL,
    canonical bytea NOT NULL,
    prev_hash bytea NOT NULL,
    hash bytea NOT NULL,
    PRIMARY KEY (tenant_id, id),
    UNIQUE (chain, seq)
);
CREATE UNIQUE INDEX audit_events_id ON audit_events (id);
CREATE INDEX audit_events_target ON audit_events (target_id, id);
CREATE INDEX audit_events_actor ON audit_events (actor_id, id);

ALTER TABLE audit_events ENABLE ROW LEVEL SECURITY;
CREATE POLICY audit_events_visible ON audit_events USING (app_sees(tenant_id)) WITH CHECK (app_sees(tenant_id));
GRANT SELECT, INSERT ON audit_events TO backoffice_app;

CREATE FUNCTION audit_refuse_change() RETURNS trigger
    LANGUAGE plpgsql
    AS $$ BEGIN RAISE EXCEPTION 'audit_events is append-only: % refused', TG_OP USING ERRCODE = 'insufficient_privilege'; END $$;
CREATE TRIGGER audit_events_no_update BEFORE UPDATE OR DELETE ON audit_events FOR EACH ROW EXECUTE FUNCTION audit_refuse_change();
CREATE TRIGGER audit_events_no_truncate BEFORE TRUNCATE ON audit_events FOR EACH STATEMENT EXECUTE FUNCTION audit_refuse_change();

-- The canonical bytes of an event: jsonb's text form (keys in a fixed order) of every field but the hashes.
CREATE FUNCTION audit_canonical(
    p_chain text, p_seq bigint, p_tenant uuid, p_occurred_at timestamptz, p_actor_id uuid, p_actor_role text,
    p_action text, p_target_type text, p_target_id text, p_request_id text, p_source_ip text, p_reason text,
    p_before jsonb, p_after jsonb, p_policy_digest text
) RETURNS bytea
    LANGUAGE sql IMMUTABLE
    AS $$
    SELECT convert_to(jsonb_build_object(
        'chain', p_chain, 'seq', p_seq, 'tenant_id', p_tenant,
        'occurred_at', to_char(p_occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
        'actor_id', p_actor_id, 'actor_role', p_actor_role, 'action', p_action,
        'target_type', p_target_type, 'target_id', p_target_id, 'request_id', p_request_id,
        'source_ip', p_source_ip, 'reason', p_reason, 'before', p_before, 'after', p_after,
        'policy_digest', p_policy_digest)::text, 'UTF8')
$$;

-- Appends one event to its chain in the caller's transaction. The head row is created or advanced
-- with one INSERT … ON CONFLICT DO UPDATE, which locks it until commit: appends to one chain are
-- serialised and every append sees the committed head, so a chain never forks.
CREATE FUNCTION audit_append(
    p_chain text, p_tenant uuid, p_actor_id uuid, p_actor_role text, p_action text, p_target_type text,
    p_target_id text, p_request_id text, p_source_ip text, p_reason text, p_before jsonb, p_after jsonb,
    p_policy_digest text
) RETURNS bigint
    LANGUAGE plpgsql
    AS $$
DECLARE
    v_seq bigint;
    v_prev bytea;
    v_at timestamptz := clock_timestamp();
    v_canonical bytea;
    v_hash bytea;
    v_id bigint;
BEGIN
    INSERT INTO audit_chain_heads AS h (tenant_id, chain, seq, hash)
        VALUES (p_tenant, p_chain, 1, '\x0000000000000000000000000000000000000000000000000000000000000000'::bytea)
        ON CONFLICT (chain) DO UPDATE SET seq = h.seq + 1
        RETURNING h.seq, h.hash INTO v_seq, v_prev;
    v_canonical := audit_canonical(p_chain, v_seq, p_tenant, v_at, p_actor_id, p_actor_role, p_action, p_target_type,
        p_target_id, p_request_id, p_source_ip, p_reason, p_before, p_after, p_policy_digest);
    v_hash := sha256(v_prev || v_canonical);
    UPDATE audit_chain_heads SET hash = v_hash WHERE chain = p_chain;
    INSERT INTO audit_events (tenant_id, chain, seq, occurred_at, actor_id, actor_role, action, target_type, target_id,
        request_id, source_ip, reason, before, after, policy_digest, canonical, prev_hash, hash)
        VALUES (p_tenant, p_chain, v_seq, v_at, p_actor_id, p_actor_role, p_action, p_target_type, p_target_id,
        p_request_id, p_source_ip, p_reason, p_before, p_after, p_policy_digest, v_canonical, v_prev, v_hash)
        RETURNING id INTO v_id;
    RETURN v_id;
END
$$;
GRANT EXECUTE ON FUNCTION audit_append(text, uuid, uuid, text, text, text, text, text, text, text, jsonb, jsonb, text) TO backoffice_app;
