-- Every tenant-owned table's keys start with tenant_id, so the schema distributes by tenant on
-- Citus (ops/SCALING.md): a primary key, a unique constraint and a foreign key between tenant
-- tables each include the distribution column. Lookups by id alone (a platform manager reading any
-- partner's order, a webhook finding its payment) keep a plain index on the id.
--
-- goods, orders, order_lines, payments: keys (tenant_id, …); an order's lines and payment refer
-- to it, and a line to its good, within the tenant.
-- audit_events: (tenant_id, chain, seq) is unique, the id index plain; audit_chain_heads and
-- audit_archive_cuts: keyed (tenant_id, chain). A chain's name already names its tenant.

ALTER TABLE order_lines DROP CONSTRAINT order_lines_order_id_fkey, DROP CONSTRAINT order_lines_good_id_fkey,
    DROP CONSTRAINT order_lines_pkey;
ALTER TABLE payments DROP CONSTRAINT payments_order_id_fkey, DROP CONSTRAINT payments_order_id_key, DROP CONSTRAINT payments_pkey,
    DROP CONSTRAINT payments_provider_provider_payment_id_key;
ALTER TABLE orders DROP CONSTRAINT orders_pkey, ADD PRIMARY KEY (tenant_id, id);
CREATE INDEX orders_id ON orders (id);
ALTER TABLE goods DROP CONSTRAINT goods_pkey, ADD PRIMARY KEY (tenant_id, id);
CREATE INDEX goods_id ON goods (id);
ALTER TABLE order_lines ADD PRIMARY KEY (tenant_id, order_id, line),
    ADD FOREIGN KEY (tenant_id, order_id) REFERENCES orders (tenant_id, id),
    ADD FOREIGN KEY (tenant_id, good_id) REFERENCES goods (tenant_id, id);
CREATE INDEX order_lines_by_order ON order_lines (order_id, line);
ALTER TABLE payments ADD PRIMARY KEY (tenant_id, id),
    ADD UNIQUE (tenant_id, order_id),
    ADD FOREIGN KEY (tenant_id, order_id) REFERENCES orders (tenant_id, id),
    ADD UNIQUE (tenant_id, provider, provider_payment_id);
CREATE INDEX payments_by_order ON payments (order_id);
CREATE INDEX payments_by_provider_id ON payments (provider, provider_payment_id);

ALTER TABLE audit_events DROP CONSTRAINT audit_events_chain_seq_key, ADD UNIQUE (tenant_id, chain, seq);
DROP INDEX audit_events_id;
CREATE INDEX audit_events_id ON audit_events (id);
ALTER TABLE audit_chain_heads DROP CONSTRAINT audit_chain_heads_pkey, ADD PRIMARY KEY (tenant_id, chain);
ALTER TABLE audit_archive_cuts DROP CONSTRAINT audit_archive_cuts_pkey, ADD CONSTRAINT audit_archive_cuts_pkey PRIMARY KEY (tenant_id, chain);

-- The functions that name a chain head or a cut, with the tenant leading.
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
        ON CONFLICT (tenant_id, chain) DO UPDATE SET seq = h.seq + 1
        RETURNING h.seq, h.hash INTO v_seq, v_prev;
    v_at := clock_timestamp();  -- read under the head's lock: later in a chain is never earlier in time
    v_canonical := audit_canonical(v_chain, v_seq, p_tenant, v_at, p_actor_id, p_actor_role, p_action, p_target_type,
        p_target_id, p_request_id, p_source_ip, p_reason, p_before, p_after, p_policy_digest, p_token_id);
    v_hash := sha256(v_prev || v_canonical);
    UPDATE audit_chain_heads SET hash = v_hash WHERE tenant_id = p_tenant AND chain = v_chain;
    INSERT INTO audit_events (tenant_id, chain, seq, occurred_at, actor_id, actor_role, action, target_type, target_id,
        request_id, source_ip, reason, before, after, policy_digest, canonical, prev_hash, hash, token_id)
        VALUES (p_tenant, v_chain, v_seq, v_at, p_actor_id, p_actor_role, p_action, p_target_type, p_target_id,
        p_request_id, p_source_ip, p_reason, p_before, p_after, p_policy_digest, v_canonical, v_prev, v_hash, p_token_id)
        RETURNING id INTO v_id;
    RETURN v_id;
END
$$;

CREATE OR REPLACE FUNCTION audit_archive_through(p_day date, p_chains text[], p_seqs bigint[], p_hashes bytea[], p_policy_digest text)
    RETURNS TABLE (chain text, removed bigint)
    LANGUAGE plpgsql
    SET search_path = public, pg_temp
    AS $$
DECLARE
    v_chain text;
    v_seq bigint;
    v_hash bytea;
    v_tenant uuid;
    v_cut audit_archive_cuts%ROWTYPE;
    v_stored bytea;
    v_removed bigint;
    v_total bigint := 0;
BEGIN
    PERFORM set_config('app.tenant_id', '00000000-0000-0000-0000-000000000000', true);
    PERFORM set_config('backoffice.audit_archiving', 'on', true);
    FOR i IN 1 .. coalesce(array_length(p_chains, 1), 0) LOOP
        v_chain := p_chains[i];
        v_seq := p_seqs[i];
        v_hash := p_hashes[i];
        v_tenant := CASE WHEN v_chain LIKE 'platform:%' THEN '00000000-0000-0000-0000-000000000000'::uuid
                         ELSE substr(v_chain, length('tenant:') + 1)::uuid END;
        SELECT * INTO v_cut FROM audit_archive_cuts c WHERE c.tenant_id = v_tenant AND c.chain = v_chain FOR UPDATE;
        IF FOUND AND v_seq < v_cut.seq THEN
            RAISE EXCEPTION 'chain % is archived through seq % already; the archive of % ends it at seq %', v_chain, v_cut.seq, p_day, v_seq
                USING ERRCODE = 'data_exception';
        END IF;
        IF FOUND AND v_seq = v_cut.seq THEN
            IF v_cut.hash <> v_hash THEN
                RAISE EXCEPTION 'chain % seq %: the archive''s hash differs from the cut''s', v_chain, v_seq USING ERRCODE = 'data_exception';
            END IF;
            CONTINUE;
        END IF;
        SELECT e.hash INTO v_stored FROM audit_events e WHERE e.tenant_id = v_tenant AND e.chain = v_chain AND e.seq = v_seq;
        IF NOT FOUND OR v_stored <> v_hash THEN
            RAISE EXCEPTION 'chain % seq %: the database does not hold the event the archive of % sealed (%)', v_chain, v_seq, p_day,
                CASE WHEN FOUND THEN 'its hash differs' ELSE 'no such event' END USING ERRCODE = 'data_exception';
        END IF;
        DELETE FROM audit_events e WHERE e.tenant_id = v_tenant AND e.chain = v_chain AND e.seq <= v_seq;
        GET DIAGNOSTICS v_removed = ROW_COUNT;
        INSERT INTO audit_archive_cuts AS c (chain, tenant_id, seq, hash, archived_through)
            VALUES (v_chain, v_tenant, v_seq, v_hash, p_day)
            ON CONFLICT ON CONSTRAINT audit_archive_cuts_pkey
            DO UPDATE SET seq = excluded.seq, hash = excluded.hash, archived_through = excluded.archived_through, archived_at = now();
        v_total := v_total + v_removed;
        chain := v_chain;
        removed := v_removed;
        RETURN NEXT;
    END LOOP;
    PERFORM set_config('backoffice.audit_archiving', 'off', true);
    PERFORM audit_append('00000000-0000-0000-0000-000000000000', NULL, 'database_owner', 'audit.archive', 'audit_log', p_day::text,
        'audit-archive', NULL, NULL, NULL, jsonb_build_object('archived_through', p_day, 'events_removed', v_total), p_policy_digest, NULL);
END $$;
