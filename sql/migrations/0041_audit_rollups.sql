-- The audit log's events by day and action family, kept up to date by the insert that appends an
-- event (in its transaction), so an auditor's home reads a few rows a day instead of a million
-- events; and the record of each verification, so the home can say how the last one went and
-- how old the newest checkpoint it compared against was.
--
-- A day is UTC; an action's family is its first part (`orders` of `orders.refund`). The rows are
-- kept per chain, so appends to different chains (each tenant's, the platform's 16 lanes) never
-- wait on the same row. Archiving removes events from the table, never their counts here.

CREATE TABLE audit_daily_actions (
    tenant_id uuid NOT NULL,
    chain text NOT NULL,
    day date NOT NULL,
    family text NOT NULL,
    events bigint NOT NULL,
    PRIMARY KEY (chain, day, family)
);
CREATE INDEX audit_daily_actions_day ON audit_daily_actions (day);
ALTER TABLE audit_daily_actions ENABLE ROW LEVEL SECURITY;
ALTER TABLE audit_daily_actions FORCE ROW LEVEL SECURITY;
CREATE POLICY audit_daily_actions_visible ON audit_daily_actions USING (app_sees(tenant_id)) WITH CHECK (app_sees(tenant_id));
GRANT SELECT ON audit_daily_actions TO backoffice_app;

CREATE FUNCTION audit_action_family(p_action text) RETURNS text
    LANGUAGE sql IMMUTABLE
    AS $$ SELECT split_part(p_action, '.', 1) $$;

CREATE FUNCTION audit_daily_actions_count() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = public, pg_temp
    AS $$
BEGIN
    INSERT INTO audit_daily_actions AS d (tenant_id, chain, day, family, events)
        VALUES (NEW.tenant_id, NEW.chain, (NEW.occurred_at AT TIME ZONE 'UTC')::date, audit_action_family(NEW.action), 1)
        ON CONFLICT (chain, day, family) DO UPDATE SET events = d.events + 1;
    RETURN NULL;
END
$$;
CREATE TRIGGER audit_daily_actions_count AFTER INSERT ON audit_events
    FOR EACH ROW EXECUTE FUNCTION audit_daily_actions_count();

-- Recomputes the counts of the days whose events are all still in the table (from each visible
-- chain's first event kept on); returns how many rows differed.
CREATE FUNCTION audit_daily_actions_rebuild() RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = public, pg_temp
    AS $$
DECLARE
    v_differed bigint;
BEGIN
    LOCK TABLE audit_daily_actions IN EXCLUSIVE MODE;
    CREATE TEMP TABLE rebuilt_actions ON COMMIT DROP AS
        SELECT tenant_id, chain, (occurred_at AT TIME ZONE 'UTC')::date AS day, audit_action_family(action) AS family,
               count(*)::bigint AS events
        FROM audit_events WHERE app_sees(tenant_id) GROUP BY 1, 2, 3, 4;
    -- A chain's first kept day may have lost events to the archive: it and the days before stay as counted.
    CREATE TEMP TABLE rebuilt_from ON COMMIT DROP AS
        SELECT chain, min(day) + CASE WHEN EXISTS (SELECT FROM audit_archive_cuts c WHERE c.chain = r.chain) THEN 1 ELSE 0 END
            AS first_day
        FROM pg_temp.rebuilt_actions r GROUP BY chain;
    DELETE FROM pg_temp.rebuilt_actions r USING pg_temp.rebuilt_from f WHERE r.chain = f.chain AND r.day < f.first_day;
    SELECT count(DISTINCT (x.chain, x.day, x.family)) INTO v_differed FROM (
        (SELECT d.tenant_id, d.chain, d.day, d.family, d.events FROM audit_daily_actions d
            JOIN pg_temp.rebuilt_from f ON f.chain = d.chain AND d.day >= f.first_day WHERE app_sees(d.tenant_id)
         EXCEPT SELECT * FROM pg_temp.rebuilt_actions)
        UNION ALL (SELECT * FROM pg_temp.rebuilt_actions EXCEPT SELECT tenant_id, chain, day, family, events FROM audit_daily_actions)) x;
    DELETE FROM audit_daily_actions d USING pg_temp.rebuilt_from f
        WHERE f.chain = d.chain AND d.day >= f.first_day AND app_sees(d.tenant_id);
    INSERT INTO audit_daily_actions SELECT * FROM pg_temp.rebuilt_actions;
    DROP TABLE pg_temp.rebuilt_actions, pg_temp.rebuilt_from;
    RETURN v_differed;
END
$$;
REVOKE ALL ON FUNCTION audit_daily_actions_rebuild() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION audit_daily_actions_rebuild() TO backoffice_app;

-- Holds the head of the chain an event of (p_tenant, p_target) will be appended to, until the
-- transaction ends (the chain as audit_append picks it): a transaction that locks other tables and
-- then appends its own event takes its head first, in the order writers take them (their head,
-- then at commit the rollups), so the two cannot deadlock.
CREATE FUNCTION audit_chain_hold(p_tenant uuid, p_target text) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = public, pg_temp
    AS $$
BEGIN
    IF p_tenant IS NULL OR NOT app_sees(p_tenant) THEN
        RAISE EXCEPTION 'audit_chain_hold: this transaction does not act for tenant %', p_tenant
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    PERFORM 1 FROM audit_chain_heads WHERE chain = CASE WHEN p_tenant = '00000000-0000-0000-0000-000000000000'
        THEN 'platform:' || lpad((get_byte(sha256(convert_to(p_target, 'UTF8')), 0) % 16)::text, 2, '0')
        ELSE 'tenant:' || p_tenant::text END
        FOR UPDATE;
END
$$;
REVOKE ALL ON FUNCTION audit_chain_hold(uuid, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION audit_chain_hold(uuid, text) TO backoffice_app;

-- Each verification of the audit log: when, by whom, what it found, and the checkpoint it
-- compared the chains with (when one was given).
CREATE TABLE audit_verifications (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id uuid NOT NULL,
    verified_at timestamptz NOT NULL,
    verified_by uuid,
    intact boolean NOT NULL,
    chains integer NOT NULL,
    events bigint NOT NULL,
    failure text CHECK (length(failure) <= 2000),
    checkpoint_taken_at timestamptz
);
CREATE INDEX audit_verifications_latest ON audit_verifications (tenant_id, verified_at DESC);
ALTER TABLE audit_verifications ENABLE ROW LEVEL SECURITY;
ALTER TABLE audit_verifications FORCE ROW LEVEL SECURITY;
CREATE POLICY audit_verifications_visible ON audit_verifications USING (app_sees(tenant_id)) WITH CHECK (app_sees(tenant_id));
GRANT SELECT, INSERT ON audit_verifications TO backoffice_app;

-- The events there already, counted for the platform (this transaction only), which sees every chain.
SELECT set_config('app.tenant_id', '00000000-0000-0000-0000-000000000000', true);
SELECT audit_daily_actions_rebuild();
