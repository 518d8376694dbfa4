-- A backend manager's home: customers by status over time and the reward economy's daily flows,
-- kept by the database in the transaction of the change (at its commit), and the indexes that
-- read locks and appeals by day.
--
-- Both rollups hold changes, not totals: a day's row says how many customers entered (+) or left
-- (−) a status that day, or how many FitPoints moved by kind; a count on a day is the sum of the
-- changes up to it. Each row is one of 16 slots, so two transactions locking or crediting at once
-- rarely wait on the same row: a customer's slot comes from its id (a lock changes one customer);
-- a transfer's from the connection that writes it, so a batch of a thousand earnings touches one
-- row per kind, not sixteen (the platform's accounts stopped keeping balances for this reason,
-- 0013). Readers add the slots; the rebuild compares the sums by day. Days are UTC.

CREATE TABLE customer_daily_statuses (
    day date NOT NULL,
    status text NOT NULL,
    slot smallint NOT NULL,
    delta bigint NOT NULL,
    PRIMARY KEY (day, status, slot)
);
ALTER TABLE customer_daily_statuses ENABLE ROW LEVEL SECURITY;
ALTER TABLE customer_daily_statuses FORCE ROW LEVEL SECURITY;
-- The service (backoffice_app, and any role that inherits it) reads them for the platform and may
-- not write them; the trigger's function (its owner) keeps them whatever the writing session acts
-- for (a bulk load too).
CREATE POLICY customer_daily_statuses_platform_only ON customer_daily_statuses USING (app_is_platform()
    OR NOT pg_has_role('backoffice_app', 'USAGE'))
    WITH CHECK (true);
GRANT SELECT ON customer_daily_statuses TO backoffice_app;

CREATE FUNCTION customer_status_slot(p_customer uuid) RETURNS smallint
    LANGUAGE sql IMMUTABLE
    AS $$ SELECT (get_byte(uuid_send(p_customer), 15) % 16)::smallint $$;

CREATE FUNCTION customer_daily_statuses_add(p_day date, p_status text, p_slot smallint, p_delta bigint) RETURNS void
    LANGUAGE sql SECURITY DEFINER
    SET search_path = public, pg_temp
    AS $$
    INSERT INTO customer_daily_statuses AS d (day, status, slot, delta) VALUES (p_day, p_status, p_slot, p_delta)
        ON CONFLICT (day, status, slot) DO UPDATE SET delta = d.delta + EXCLUDED.delta
$$;
REVOKE ALL ON FUNCTION customer_daily_statuses_add(date, text, smallint, bigint) FROM PUBLIC;

-- A customer created enters its status on the day it was created; a change of status leaves the
-- old one and enters the new one on the day of the change (its updated_at); a purge leaves it today.
CREATE FUNCTION customer_daily_statuses_follow() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = public, pg_temp
    AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM customer_daily_statuses_add((NEW.created_at AT TIME ZONE 'UTC')::date, NEW.status,
            customer_status_slot(NEW.id), 1);
    ELSIF TG_OP = 'DELETE' THEN
        PERFORM customer_daily_statuses_add((now() AT TIME ZONE 'UTC')::date, OLD.status, customer_status_slot(OLD.id), -1);
    ELSIF OLD.status <> NEW.status THEN
        PERFORM customer_daily_statuses_add((NEW.updated_at AT TIME ZONE 'UTC')::date, OLD.status,
            customer_status_slot(NEW.id), -1);
        PERFORM customer_daily_statuses_add((NEW.updated_at AT TIME ZONE 'UTC')::date, NEW.status,
            customer_status_slot(NEW.id), 1);
    END IF;
    RETURN NULL;
END
$$;
CREATE CONSTRAINT TRIGGER customer_daily_statuses_follow AFTER INSERT OR UPDATE OF status OR DELETE ON customers
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION customer_daily_statuses_follow();

-- FitPoints moved each day by kind, and how each move touched the issuance account (its balance
-- over time is the sum of these up to a day).
CREATE TABLE fitpoints_daily_flows (
    day date NOT NULL,
    kind text NOT NULL,
    slot smallint NOT NULL,
    points bigint NOT NULL,
    issuance_change bigint NOT NULL,
    PRIMARY KEY (day, kind, slot)
);
ALTER TABLE fitpoints_daily_flows ENABLE ROW LEVEL SECURITY;
ALTER TABLE fitpoints_daily_flows FORCE ROW LEVEL SECURITY;
CREATE POLICY fitpoints_daily_flows_platform_only ON fitpoints_daily_flows USING (app_is_platform()
    OR NOT pg_has_role('backoffice_app', 'USAGE'))
    WITH CHECK (true);
GRANT SELECT ON fitpoints_daily_flows TO backoffice_app;

CREATE FUNCTION fitpoints_daily_flows_follow() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = public, pg_temp
    AS $$
BEGIN
    INSERT INTO fitpoints_daily_flows AS f (day, kind, slot, points, issuance_change)
        VALUES ((NEW.created_at AT TIME ZONE 'UTC')::date, NEW.kind, (pg_backend_pid() % 16)::smallint, NEW.amount,
            CASE WHEN NEW.credit_account = '00000000-0000-0000-0000-0000000f0001' THEN NEW.amount ELSE 0 END
            - CASE WHEN NEW.debit_account = '00000000-0000-0000-0000-0000000f0001' THEN NEW.amount ELSE 0 END)
        ON CONFLICT (day, kind, slot) DO UPDATE SET points = f.points + EXCLUDED.points,
            issuance_change = f.issuance_change + EXCLUDED.issuance_change;
    RETURN NULL;
END
$$;
CREATE CONSTRAINT TRIGGER fitpoints_daily_flows_follow AFTER INSERT ON fitpoints_transfers
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION fitpoints_daily_flows_follow();

-- Recomputes both from the source and returns the keys that differed, by table. Customers: each
-- enters `active` when created; a lock moves it to `locked` when it was placed and back when it was
-- lifted; a deletion moves it to `deleted` (from `locked` when a lock was open then). A deletion
-- undone leaves no trace in the source, so the rebuild shows that customer as never deleted; a
-- purged customer leaves none either, so after a purge the rebuild counts it out of every day.
CREATE FUNCTION manager_rollups_rebuild() RETURNS TABLE (rollup text, differed bigint)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = public, pg_temp
    AS $$
BEGIN
    IF NOT app_is_platform() THEN
        RAISE EXCEPTION 'the managers'' figures are the platform''s' USING ERRCODE = 'insufficient_privilege';
    END IF;
    LOCK TABLE customer_daily_statuses, fitpoints_daily_flows IN EXCLUSIVE MODE;
    CREATE TEMP TABLE moves ON COMMIT DROP AS
        SELECT (created_at AT TIME ZONE 'UTC')::date AS day, 'active'::text AS status, customer_status_slot(id) AS slot,
               1::bigint AS delta FROM customers
        UNION ALL SELECT (l.locked_at AT TIME ZONE 'UTC')::date, s.status, customer_status_slot(l.customer_id), s.delta
            FROM account_locks l JOIN customers c ON c.id = l.customer_id
            CROSS JOIN (VALUES ('active', -1), ('locked', 1)) s (status, delta)
            WHERE c.deleted_at IS NULL OR l.locked_at < c.deleted_at
        UNION ALL SELECT (l.lifted_at AT TIME ZONE 'UTC')::date, s.status, customer_status_slot(l.customer_id), s.delta
            FROM account_locks l JOIN customers c ON c.id = l.customer_id
            CROSS JOIN (VALUES ('locked', -1), ('active', 1)) s (status, delta)
            WHERE l.lifted_at IS NOT NULL AND (c.deleted_at IS NULL OR l.lifted_at < c.deleted_at)
        UNION ALL SELECT (c.deleted_at AT TIME ZONE 'UTC')::date, s.status, customer_status_slot(c.id), s.delta
            FROM customers c
            CROSS JOIN LATERAL (SELECT EXISTS (SELECT FROM account_locks l WHERE l.customer_id = c.id
                AND l.locked_at < c.deleted_at AND (l.lifted_at IS NULL OR l.lifted_at > c.deleted_at)) AS locked) k
            CROSS JOIN LATERAL (VALUES (CASE WHEN k.locked THEN 'locked' ELSE 'active' END, -1), ('deleted', 1))
                s (status, delta)
            WHERE c.status = 'deleted' AND c.deleted_at IS NOT NULL;
    CREATE TEMP TABLE rebuilt_statuses ON COMMIT DROP AS
        SELECT day, status, slot, sum(delta)::bigint AS delta FROM pg_temp.moves GROUP BY 1, 2, 3 HAVING sum(delta) <> 0;
    CREATE TEMP TABLE rebuilt_flows ON COMMIT DROP AS
        SELECT (created_at AT TIME ZONE 'UTC')::date AS day, kind, 0::smallint AS slot, sum(amount)::bigint AS points,
               sum(CASE WHEN credit_account = '00000000-0000-0000-0000-0000000f0001' THEN amount ELSE 0 END
                 - CASE WHEN debit_account = '00000000-0000-0000-0000-0000000f0001' THEN amount ELSE 0 END)::bigint
                   AS issuance_change
        FROM fitpoints_transfers GROUP BY 1, 2, 3;
    RETURN QUERY SELECT 'customers', count(DISTINCT (x.day, x.status, x.slot)) FROM (
        (SELECT day, status, slot, delta FROM customer_daily_statuses WHERE delta <> 0 EXCEPT SELECT * FROM pg_temp.rebuilt_statuses)
        UNION ALL (SELECT * FROM pg_temp.rebuilt_statuses EXCEPT SELECT day, status, slot, delta FROM customer_daily_statuses)) x;
    RETURN QUERY SELECT 'fitpoints', count(DISTINCT (x.day, x.kind)) FROM (
        (SELECT day, kind, sum(points)::bigint, sum(issuance_change)::bigint FROM fitpoints_daily_flows GROUP BY 1, 2
         EXCEPT SELECT day, kind, points, issuance_change FROM pg_temp.rebuilt_flows)
        UNION ALL (SELECT day, kind, points, issuance_change FROM pg_temp.rebuilt_flows
         EXCEPT SELECT day, kind, sum(points)::bigint, sum(issuance_change)::bigint FROM fitpoints_daily_flows GROUP BY 1, 2)) x;
    DELETE FROM customer_daily_statuses;
    DELETE FROM fitpoints_daily_flows;
    INSERT INTO customer_daily_statuses SELECT * FROM pg_temp.rebuilt_statuses;
    INSERT INTO fitpoints_daily_flows SELECT * FROM pg_temp.rebuilt_flows;
    DROP TABLE pg_temp.moves, pg_temp.rebuilt_statuses, pg_temp.rebuilt_flows;
END
$$;
REVOKE ALL ON FUNCTION manager_rollups_rebuild() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION manager_rollups_rebuild() TO backoffice_app;

-- Locks placed and appeals filed by day.
CREATE INDEX account_locks_by_day ON account_locks (locked_at);
CREATE INDEX appeals_by_day ON appeals (created_at);

-- What is there already, for the platform (this transaction only).
SELECT set_config('app.tenant_id', '00000000-0000-0000-0000-000000000000', true);
SELECT count(*) FROM manager_rollups_rebuild();
