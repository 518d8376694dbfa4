-- Partial refunds of a shipped or delivered order: some of its lines, or an amount, with a reason.
--
-- A refund is asked in two phases, as the provider's other calls are: a `pending` row under the
-- order's row lock (its cash never more than the capture less what was refunded or is being
-- refunded; its lines never more units than were bought less those refunded or being refunded, kept
-- by order_lines.refunded_quantity and its CHECK), the provider asked under the key `refund:<id>`,
-- then the verdict: `succeeded` adds the cash to the payment's refunded_cents, gives the refund's
-- FitPoints back through the ledger and, for a return, puts the lines' units back in stock (once:
-- each unit is refunded at most once); `failed` keeps the provider's code and frees the lines. A
-- refund of FitPoints lines alone needs no provider and succeeds at once.
ALTER TABLE order_lines ADD COLUMN refunded_quantity integer NOT NULL DEFAULT 0,
    ADD CONSTRAINT order_lines_refund_within_quantity CHECK (refunded_quantity BETWEEN 0 AND quantity);

CREATE TABLE order_refunds (
    tenant_id uuid NOT NULL REFERENCES tenants (id),
    id uuid NOT NULL,
    order_id uuid NOT NULL,
    amount_cents bigint NOT NULL CHECK (amount_cents >= 0),
    fitpoints bigint NOT NULL CHECK (fitpoints >= 0),
    restock boolean NOT NULL,
    reason text NOT NULL CHECK (length(reason) BETWEEN 1 AND 500),
    status text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
    provider_key text CHECK (length(provider_key) <= 100),
    provider_refund_id text CHECK (length(provider_refund_id) <= 200),
    failure_code text CHECK (length(failure_code) <= 100),
    requested_by uuid,
    created_at timestamptz NOT NULL,
    decided_at timestamptz,
    CHECK ((status = 'pending') = (decided_at IS NULL)),
    CHECK (amount_cents > 0 OR fitpoints > 0),
    CHECK ((amount_cents > 0) = (provider_key IS NOT NULL)),
    PRIMARY KEY (tenant_id, id),
    UNIQUE (tenant_id, provider_key),
    FOREIGN KEY (tenant_id, order_id) REFERENCES orders (tenant_id, id)
);
CREATE INDEX order_refunds_id ON order_refunds (id);
CREATE INDEX order_refunds_by_order ON order_refunds (order_id, created_at, id);

-- The units of each line a refund gives back.
CREATE TABLE order_refund_lines (
    tenant_id uuid NOT NULL REFERENCES tenants (id),
    refund_id uuid NOT NULL,
    order_id uuid NOT NULL,
    line integer NOT NULL,
    quantity integer NOT NULL CHECK (quantity BETWEEN 1 AND 100),
    PRIMARY KEY (tenant_id, refund_id, line),
    FOREIGN KEY (tenant_id, refund_id) REFERENCES order_refunds (tenant_id, id),
    FOREIGN KEY (tenant_id, order_id, line) REFERENCES order_lines (tenant_id, order_id, line)
);
CREATE INDEX order_refund_lines_by_refund ON order_refund_lines (refund_id);

ALTER TABLE order_refunds ENABLE ROW LEVEL SECURITY;
ALTER TABLE order_refunds FORCE ROW LEVEL SECURITY;
CREATE POLICY order_refunds_visible ON order_refunds USING (app_sees(tenant_id)) WITH CHECK (app_sees(tenant_id));
ALTER TABLE order_refund_lines ENABLE ROW LEVEL SECURITY;
ALTER TABLE order_refund_lines FORCE ROW LEVEL SECURITY;
CREATE POLICY order_refund_lines_visible ON order_refund_lines USING (app_sees(tenant_id))
    WITH CHECK (app_sees(tenant_id));
GRANT SELECT, INSERT, UPDATE ON order_refunds TO backoffice_app;
GRANT SELECT, INSERT ON order_refund_lines TO backoffice_app;
-- A line's units refunded is the one column of a line that changes after checkout.
GRANT UPDATE (refunded_quantity) ON order_lines TO backoffice_app;

-- The FitPoints of one succeeded partial refund given back to its order's customer, once (the
-- ledger's key is `order:<order>:refund:<refund>`). Returns the points given back (0 when there were
-- none, or they were given back already).
CREATE FUNCTION return_refund_fitpoints(p_refund uuid, p_actor uuid, p_reason text, p_at timestamptz) RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
    AS $$
DECLARE
    v_order uuid;
    v_customer uuid;
    v_points bigint;
    v_caller text := current_setting('app.tenant_id', true);
    v_done bigint;
BEGIN
    SELECT r.order_id, o.customer_id, r.fitpoints INTO v_order, v_customer, v_points
        FROM order_refunds r JOIN orders o ON o.id = r.order_id
        WHERE r.id = p_refund AND app_sees(r.tenant_id) AND r.status = 'succeeded';
    IF NOT FOUND OR v_points = 0 THEN
        RETURN 0;
    END IF;
    PERFORM set_config('app.tenant_id', '00000000-0000-0000-0000-000000000000', true);
    INSERT INTO fitpoints_transfers (movement_id, kind, debit_account, credit_account, amount, reason, source_event_id, created_by, created_at)
        VALUES (gen_random_uuid(), 'refund', '00000000-0000-0000-0000-0000000f0002', v_customer, v_points, p_reason,
                'order:' || v_order || ':refund:' || p_refund, p_actor, p_at)
        ON CONFLICT (kind, source_event_id) WHERE kind IN ('redemption', 'refund') AND source_event_id LIKE 'order:%' DO NOTHING
        RETURNING amount INTO v_done;
    PERFORM set_config('app.tenant_id', v_caller, true);
    RETURN coalesce(v_done, 0);
END $$;
REVOKE ALL ON FUNCTION return_refund_fitpoints(uuid, uuid, text, timestamptz) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION return_refund_fitpoints(uuid, uuid, text, timestamptz) TO backoffice_app;

-- What a cancelled, failed or wholly refunded order gives back: what it redeemed less what its
-- partial refunds gave back already.
CREATE OR REPLACE FUNCTION return_order_fitpoints(p_order uuid, p_actor uuid, p_reason text, p_at timestamptz) RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
    AS $$
DECLARE
    v_customer uuid;
    v_points bigint;
    v_caller text := current_setting('app.tenant_id', true);
    v_done bigint;
BEGIN
    SELECT o.customer_id, o.total_fitpoints - coalesce((SELECT sum(r.fitpoints) FROM order_refunds r
            WHERE r.order_id = o.id AND r.status = 'succeeded'), 0)
        INTO v_customer, v_points FROM orders o
        WHERE o.id = p_order AND app_sees(o.tenant_id) AND o.status IN ('cancelled', 'refunded', 'payment_failed');
    IF NOT FOUND OR v_points <= 0 THEN
        RETURN 0;
    END IF;
    PERFORM set_config('app.tenant_id', '00000000-0000-0000-0000-000000000000', true);
    INSERT INTO fitpoints_transfers (movement_id, kind, debit_account, credit_account, amount, reason, source_event_id, created_by, created_at)
        VALUES (gen_random_uuid(), 'refund', '00000000-0000-0000-0000-0000000f0002', v_customer, v_points, p_reason, 'order:' || p_order,
                p_actor, p_at)
        ON CONFLICT (kind, source_event_id) WHERE kind IN ('redemption', 'refund') AND source_event_id LIKE 'order:%' DO NOTHING
        RETURNING amount INTO v_done;
    PERFORM set_config('app.tenant_id', v_caller, true);
    RETURN coalesce(v_done, 0);
END $$;

-- What an order's partial refunds that succeeded gave back: (cents, FitPoints).
CREATE FUNCTION order_partial_refunds(p_order uuid, OUT cents bigint, OUT fitpoints bigint)
    LANGUAGE sql STABLE SET search_path = public, pg_temp
    AS $$
    SELECT coalesce(sum(amount_cents), 0)::bigint, coalesce(sum(fitpoints), 0)::bigint
    FROM order_refunds WHERE order_id = p_order AND status = 'succeeded'
$$;
REVOKE ALL ON FUNCTION order_partial_refunds(uuid) FROM PUBLIC;

-- A partial refund counts on the day it succeeded (its shop's refunds, cents and FitPoints).
CREATE FUNCTION shop_rollups_follow_refund() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = public, pg_temp
    AS $$
BEGIN
    IF NEW.status <> 'succeeded' OR (TG_OP = 'UPDATE' AND OLD.status = 'succeeded') THEN
        RETURN NULL;
    END IF;
    INSERT INTO shop_daily_refunds AS r (tenant_id, day, refunds, refunded_cents, refunded_fitpoints)
        VALUES (NEW.tenant_id, (NEW.decided_at AT TIME ZONE 'UTC')::date, 1, NEW.amount_cents, NEW.fitpoints)
        ON CONFLICT (tenant_id, day) DO UPDATE SET refunds = r.refunds + 1,
            refunded_cents = r.refunded_cents + EXCLUDED.refunded_cents,
            refunded_fitpoints = r.refunded_fitpoints + EXCLUDED.refunded_fitpoints;
    RETURN NULL;
END
$$;
CREATE CONSTRAINT TRIGGER shop_rollups_follow_refund AFTER INSERT OR UPDATE OF status ON order_refunds
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION shop_rollups_follow_refund();

-- An order's whole refund counts what was left once its partial refunds are taken off (those
-- counted on their own days).
CREATE OR REPLACE FUNCTION shop_rollups_follow_order() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = public, pg_temp
    AS $$
DECLARE
    v_day date := (NEW.created_at AT TIME ZONE 'UTC')::date;
    v_was_kept boolean := TG_OP = 'UPDATE' AND order_status_kept(OLD.status);
    v_partial record;
BEGIN
    IF TG_OP = 'UPDATE' THEN
        IF OLD.status = NEW.status THEN
            RETURN NULL;
        END IF;
        UPDATE shop_daily_orders SET orders = orders - 1, total_cents = total_cents - OLD.total_cents,
            total_fitpoints = total_fitpoints - OLD.total_fitpoints
            WHERE tenant_id = OLD.tenant_id AND day = v_day AND status = OLD.status;
    END IF;
    INSERT INTO shop_daily_orders AS d (tenant_id, day, status, orders, total_cents, total_fitpoints)
        VALUES (NEW.tenant_id, v_day, NEW.status, 1, NEW.total_cents, NEW.total_fitpoints)
        ON CONFLICT (tenant_id, day, status) DO UPDATE SET orders = d.orders + 1,
            total_cents = d.total_cents + EXCLUDED.total_cents, total_fitpoints = d.total_fitpoints + EXCLUDED.total_fitpoints;
    IF NEW.status = 'refunded' THEN
        v_partial := order_partial_refunds(NEW.id);
        INSERT INTO shop_daily_refunds AS r (tenant_id, day, refunds, refunded_cents, refunded_fitpoints)
            VALUES (NEW.tenant_id, (NEW.updated_at AT TIME ZONE 'UTC')::date, 1, NEW.total_cents - v_partial.cents,
                    NEW.total_fitpoints - v_partial.fitpoints)
            ON CONFLICT (tenant_id, day) DO UPDATE SET refunds = r.refunds + 1,
                refunded_cents = r.refunded_cents + EXCLUDED.refunded_cents,
                refunded_fitpoints = r.refunded_fitpoints + EXCLUDED.refunded_fitpoints;
    END IF;
    IF order_status_kept(NEW.status) <> v_was_kept THEN
        PERFORM shop_daily_goods_add(NEW.tenant_id, NEW.id, v_day, CASE WHEN v_was_kept THEN -1 ELSE 1 END);
    END IF;
    RETURN NULL;
END
$$;

-- The refunds' rows rebuilt as the triggers keep them: each wholly refunded order on its last
-- change's day (less its partial refunds), each partial refund on the day it succeeded.
CREATE OR REPLACE FUNCTION shop_rollups_rebuild(p_tenant uuid) RETURNS TABLE (rollup text, differed bigint)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = public, pg_temp
    AS $$
BEGIN
    -- Writers wait until the rebuild commits: none slips between its reading and its writing.
    LOCK TABLE shop_daily_orders, shop_daily_refunds, shop_daily_goods IN EXCLUSIVE MODE;
    CREATE TEMP TABLE rebuilt_orders ON COMMIT DROP AS
        SELECT tenant_id, (created_at AT TIME ZONE 'UTC')::date AS day, status, count(*)::bigint AS orders,
               sum(total_cents)::bigint AS total_cents, sum(total_fitpoints)::bigint AS total_fitpoints
        FROM orders WHERE (p_tenant IS NULL OR tenant_id = p_tenant) AND app_sees(tenant_id) GROUP BY 1, 2, 3;
    CREATE TEMP TABLE rebuilt_refunds ON COMMIT DROP AS
        SELECT tenant_id, day, count(*)::bigint AS refunds, sum(cents)::bigint AS refunded_cents,
               sum(points)::bigint AS refunded_fitpoints
        FROM (
            SELECT o.tenant_id, (o.updated_at AT TIME ZONE 'UTC')::date AS day, o.total_cents - p.cents AS cents,
                   o.total_fitpoints - p.fitpoints AS points
            FROM orders o CROSS JOIN LATERAL order_partial_refunds(o.id) p
            WHERE o.status = 'refunded' AND (p_tenant IS NULL OR o.tenant_id = p_tenant) AND app_sees(o.tenant_id)
            UNION ALL
            SELECT tenant_id, (decided_at AT TIME ZONE 'UTC')::date, amount_cents, fitpoints FROM order_refunds
            WHERE status = 'succeeded' AND (p_tenant IS NULL OR tenant_id = p_tenant) AND app_sees(tenant_id)
        ) e
        GROUP BY 1, 2;
    CREATE TEMP TABLE rebuilt_goods ON COMMIT DROP AS
        SELECT o.tenant_id, (o.created_at AT TIME ZONE 'UTC')::date AS day, l.good_id, sum(l.quantity)::bigint AS units,
               coalesce(sum(l.quantity * l.unit_price) FILTER (WHERE l.paid_in = 'usd'), 0)::bigint AS revenue_cents,
               coalesce(sum(l.quantity * l.unit_price) FILTER (WHERE l.paid_in = 'fitpoints'), 0)::bigint AS revenue_fitpoints
        FROM orders o JOIN order_lines l ON l.tenant_id = o.tenant_id AND l.order_id = o.id
        WHERE order_status_kept(o.status) AND (p_tenant IS NULL OR o.tenant_id = p_tenant) AND app_sees(o.tenant_id)
        GROUP BY 1, 2, 3;

    RETURN QUERY SELECT 'orders', count(DISTINCT (x.tenant_id, x.day, x.status)) FROM (
        (SELECT tenant_id, day, status, orders, total_cents, total_fitpoints FROM shop_daily_orders
            WHERE (p_tenant IS NULL OR tenant_id = p_tenant) AND app_sees(tenant_id) AND orders <> 0
         EXCEPT SELECT * FROM pg_temp.rebuilt_orders)
        UNION ALL (SELECT * FROM pg_temp.rebuilt_orders EXCEPT SELECT tenant_id, day, status, orders, total_cents, total_fitpoints
            FROM shop_daily_orders WHERE (p_tenant IS NULL OR tenant_id = p_tenant) AND app_sees(tenant_id))) x;
    RETURN QUERY SELECT 'refunds', count(DISTINCT (x.tenant_id, x.day)) FROM (
        (SELECT tenant_id, day, refunds, refunded_cents, refunded_fitpoints FROM shop_daily_refunds
            WHERE (p_tenant IS NULL OR tenant_id = p_tenant) AND app_sees(tenant_id) EXCEPT SELECT * FROM pg_temp.rebuilt_refunds)
        UNION ALL (SELECT * FROM pg_temp.rebuilt_refunds EXCEPT SELECT tenant_id, day, refunds, refunded_cents, refunded_fitpoints
            FROM shop_daily_refunds WHERE (p_tenant IS NULL OR tenant_id = p_tenant) AND app_sees(tenant_id))) x;
    RETURN QUERY SELECT 'goods', count(DISTINCT (x.tenant_id, x.day, x.good_id)) FROM (
        (SELECT tenant_id, day, good_id, units, revenue_cents, revenue_fitpoints FROM shop_daily_goods
            WHERE (p_tenant IS NULL OR tenant_id = p_tenant) AND app_sees(tenant_id) AND units <> 0 EXCEPT SELECT * FROM pg_temp.rebuilt_goods)
        UNION ALL (SELECT * FROM pg_temp.rebuilt_goods EXCEPT SELECT tenant_id, day, good_id, units, revenue_cents,
            revenue_fitpoints FROM shop_daily_goods WHERE (p_tenant IS NULL OR tenant_id = p_tenant) AND app_sees(tenant_id))) x;

    DELETE FROM shop_daily_orders WHERE (p_tenant IS NULL OR tenant_id = p_tenant) AND app_sees(tenant_id);
    DELETE FROM shop_daily_refunds WHERE (p_tenant IS NULL OR tenant_id = p_tenant) AND app_sees(tenant_id);
    DELETE FROM shop_daily_goods WHERE (p_tenant IS NULL OR tenant_id = p_tenant) AND app_sees(tenant_id);
    INSERT INTO shop_daily_orders SELECT * FROM pg_temp.rebuilt_orders;
    INSERT INTO shop_daily_refunds SELECT * FROM pg_temp.rebuilt_refunds;
    INSERT INTO shop_daily_goods SELECT * FROM pg_temp.rebuilt_goods;
    DROP TABLE pg_temp.rebuilt_orders, pg_temp.rebuilt_refunds, pg_temp.rebuilt_goods;
END
$$;
