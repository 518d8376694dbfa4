-- Audit archival: events older than the retention period leave the database once they are in the
-- signed daily archives (ops/audit-daily), and every chain still verifies across the cut.
--
-- A cut records, per chain, the last archived event (seq and hash, as sealed in the archive of
-- `archived_through`). Online verification continues each chain from its cut; an export of what
-- remains is verified offline from the archive's signed heads (`audit verify --offline --from`).
--
-- Only the tables' owner archives (`backoffice audit archive`, with the owner's URL): the service
-- role can read the cuts but not write them, and still cannot delete an event. The function
-- deletes only up to heads that match the stored events exactly, so a database that diverges
-- from the signed archive is refused and nothing is removed. The archival is itself audited.

CREATE TABLE audit_archive_cuts (
    chain text PRIMARY KEY,
    tenant_id uuid NOT NULL,
    seq bigint NOT NULL CHECK (seq >= 1),
    hash bytea NOT NULL,
    archived_through date NOT NULL,
    archived_at timestamptz NOT NULL DEFAULT now()
);
ALTER TABLE audit_archive_cuts ENABLE ROW LEVEL SECURITY;
ALTER TABLE audit_archive_cuts FORCE ROW LEVEL SECURITY;
CREATE POLICY audit_archive_cuts_visible ON audit_archive_cuts USING (app_sees(tenant_id));
GRANT SELECT ON audit_archive_cuts TO backoffice_app;

-- The append-only trigger lets a delete through only inside audit_archive_through.
CREATE OR REPLACE FUNCTION audit_refuse_change() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF TG_OP = 'DELETE' AND current_setting('backoffice.audit_archiving', true) = 'on' THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION 'audit_events is append-only: % refused', TG_OP USING ERRCODE = 'insufficient_privilege';
END $$;

-- Archives every chain through the sealed heads of `p_day`: checks each head against the stored
-- event (or the existing cut when the chain has not moved), moves the cut, deletes the events up
-- to it, and appends an `audit.archive` event. All or nothing. Returns the events removed per chain.
CREATE FUNCTION audit_archive_through(p_day date, p_chains text[], p_seqs bigint[], p_hashes bytea[], p_policy_digest text)
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
        SELECT * INTO v_cut FROM audit_archive_cuts c WHERE c.chain = v_chain FOR UPDATE;
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
        SELECT e.hash, e.tenant_id INTO v_stored, v_tenant FROM audit_events e WHERE e.chain = v_chain AND e.seq = v_seq;
        IF NOT FOUND OR v_stored <> v_hash THEN
            RAISE EXCEPTION 'chain % seq %: the database does not hold the event the archive of % sealed (%)', v_chain, v_seq, p_day,
                CASE WHEN FOUND THEN 'its hash differs' ELSE 'no such event' END USING ERRCODE = 'data_exception';
        END IF;
        DELETE FROM audit_events e WHERE e.chain = v_chain AND e.seq <= v_seq;
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
REVOKE ALL ON FUNCTION audit_archive_through(date, text[], bigint[], bytea[], text) FROM PUBLIC;
