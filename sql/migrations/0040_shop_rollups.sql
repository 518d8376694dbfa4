-- A shop's daily figures, kept up to date in the transaction that changes an order, so a shop's
-- home and its sales report read a few rows a day instead of every order (at 50,000 orders a
-- shop, the direct aggregates took longer than a home may).
--
-- Days are UTC. Definitions (docs/console.md):
--   gross   the orders placed that day that were paid (paid, accepted, shipped, delivered, or
--           later refunded): their totals;
--   refunds the orders refunded that day (by the day of the refund, not of the order): their totals;
--   net     gross − refunds, per day (negative on a day that refunded more than it sold).
-- Goods sold count the orders placed that day that are paid and neither cancelled nor refunded.
--
-- The rows follow the orders through a deferred trigger (at commit, when an order's lines are
-- there too); `shop_rollups_rebuild` recomputes a shop's rows from its orders and says whether
-- they differed. The service reads them and never writes them itself.

CREATE TABLE shop_daily_orders (
    tenant_id uuid NOT NULL REFERENCES tenants (id),
    day date NOT NULL,
    status text NOT NULL,
    orders bigint NOT NULL,
    total_cents bigint NOT NULL,
    total_fitpoints bigint NOT NULL,
    PRIMARY KEY (tenant_id, day, status)
);

CREATE TABLE shop_daily_refunds (
    tenant_id uuid NOT NULL REFERENCES tenants (id),
    day date NOT NULL,
    refunds bigint NOT NULL,
    refunded_cents bigint NOT NULL,
    refunded_fitpoints bigint NOT NULL,
    PRIMARY KEY (tenant_id, day)
);

CREATE TABLE shop_daily_goods (
    tenant_id uuid NOT NULL REFERENCES tenants (id),
    day date NOT NULL,
    good_id uuid NOT NULL,
    units bigint NOT NULL,
    revenue_cents bigint NOT NULL,
    revenue_fitpoints bigint NOT NULL,
    PRIMARY KEY (tenant_id, day, good_id)
);

-- Every shop's days side by side (the platform's home, the sales report of every shop).
CREATE INDEX shop_daily_orders_day ON shop_daily_orders (day);
CREATE INDEX shop_daily_refunds_day ON shop_daily_refunds (day);

ALTER TABLE shop_daily_orders ENABLE ROW LEVEL SECURITY;
ALTER TABLE shop_daily_orders FORCE ROW LEVEL SECURITY;
CREATE POLICY shop_daily_orders_visible ON shop_daily_orders USING (app_sees(tenant_id)) WITH CHECK (app_sees(tenant_id));
ALTER TABLE shop_daily_refunds ENABLE ROW LEVEL SECURITY;
ALTER TABLE shop_daily_refunds FORCE ROW LEVEL SECURITY;
CREATE POLICY shop_daily_refunds_visible ON shop_daily_refunds USING (app_sees(tenant_id)) WITH CHECK (app_sees(tenant_id));
ALTER TABLE shop_daily_goods ENABLE ROW LEVEL SECURITY;
ALTER TABLE shop_daily_goods FORCE ROW LEVEL SECURITY;
CREATE POLICY shop_daily_goods_visible ON shop_daily_goods USING (app_sees(tenant_id)) WITH CHECK (app_sees(tenant_id));
GRANT SELECT ON shop_daily_orders, shop_daily_refunds, shop_daily_goods TO backoffice_app;

-- The order states whose money was taken (gross), and those that keep it (goods sold).
CREATE FUNCTION order_status_sold(p_status text) RETURNS boolean
    LANGUAGE sql IMMUTABLE
    AS $$ SELECT p_status IN ('paid', 'accepted', 'shipped', 'delivered', 'refunded') $$;
CREATE FUNCTION order_status_kept(p_status text) RETURNS boolean
    LANGUAGE sql IMMUTABLE
    AS $$ SELECT p_status IN ('paid', 'accepted', 'shipped', 'delivered') $$;

-- Adds `p_sign` times an order's lines to the goods sold on its day.
CREATE FUNCTION shop_daily_goods_add(p_tenant uuid, p_order uuid, p_day date, p_sign integer) RETURNS void
    LANGUAGE sql SECURITY DEFINER
    SET search_path = public, pg_temp
    AS $$
    INSERT INTO shop_daily_goods AS g (tenant_id, day, good_id, units, revenue_cents, revenue_fitpoints)
        SELECT p_tenant, p_day, l.good_id, p_sign * sum(l.quantity),
               p_sign * coalesce(sum(l.quantity * l.unit_price) FILTER (WHERE l.paid_in = 'usd'), 0),
               p_sign * coalesce(sum(l.quantity * l.unit_price) FILTER (WHERE l.paid_in = 'fitpoints'), 0)
        FROM order_lines l WHERE l.tenant_id = p_tenant AND l.order_id = p_order GROUP BY l.good_id
        ON CONFLICT (tenant_id, day, good_id) DO UPDATE SET units = g.units + EXCLUDED.units,
            revenue_cents = g.revenue_cents + EXCLUDED.revenue_cents,
            revenue_fitpoints = g.revenue_fitpoints + EXCLUDED.revenue_fitpoints
$$;

-- Follows one order's insert or change of state (at commit): its day's count by state, the day's
-- refunds when it is refunded, and its goods when it starts or stops keeping its money.
CREATE FUNCTION shop_rollups_follow_order() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = public, pg_temp
    AS $$
DECLARE
    v_day date := (NEW.created_at AT TIME ZONE 'UTC')::date;
    v_was_kept boolean := TG_OP = 'UPDATE' AND order_status_kept(OLD.status);
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
        INSERT INTO shop_daily_refunds AS r (tenant_id, day, refunds, refunded_cents, refunded_fitpoints)
            VALUES (NEW.tenant_id, (NEW.updated_at AT TIME ZONE 'UTC')::date, 1, NEW.total_cents, NEW.total_fitpoints)
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
CREATE CONSTRAINT TRIGGER shop_rollups_follow_order AFTER INSERT OR UPDATE OF status ON orders
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION shop_rollups_follow_order();

-- Recomputes the rows of the shops this transaction sees (one shop, or every shop for the
-- platform) from their orders; returns, per table, how many days (keys) differed from what was kept
-- (0 when the trigger kept them right). Only rows the caller's tenant may see are read or replaced,
-- whoever owns the function. A refund's day is its order's last change (a refunded
-- order changes no more).
CREATE FUNCTION shop_rollups_rebuild(p_tenant uuid) RETURNS TABLE (rollup text, differed bigint)
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
        SELECT tenant_id, (updated_at AT TIME ZONE 'UTC')::date AS day, count(*)::bigint AS refunds,
               sum(total_cents)::bigint AS refunded_cents, sum(total_fitpoints)::bigint AS refunded_fitpoints
        FROM orders WHERE status = 'refunded' AND (p_tenant IS NULL OR tenant_id = p_tenant) AND app_sees(tenant_id)
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
REVOKE ALL ON FUNCTION shop_rollups_rebuild(uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION shop_rollups_rebuild(uuid) TO backoffice_app;
REVOKE ALL ON FUNCTION shop_daily_goods_add(uuid, uuid, date, integer) FROM PUBLIC;

-- The orders there already, read for the platform (this transaction only), which sees every shop's.
SELECT set_config('app.tenant_id', '00000000-0000-0000-0000-000000000000', true);
SELECT shop_rollups_rebuild(NULL);
