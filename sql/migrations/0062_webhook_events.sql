-- Webhook events: what happened in a shop, written by the database in the very transaction of the
-- change (the outbox), with one delivery per endpoint of the shop that asked for the event's type.
-- A delivery is sent at least once, in order per endpoint, by `WebhookDelivery` (the service).
--
-- Events are written by triggers, so no path that changes an order or a good's stock can forget
-- one: an order placed (any status), paid, cancelled or refunded; a good whose stock falls to the
-- low-stock line (5 units) or below from above it. An event carries what happened and the ids, not
-- the customer's details: the partner reads the order through the API.
--
-- Order per endpoint: the trigger locks the endpoints it writes for until its transaction ends, so
-- two transactions writing for one endpoint take their sequence numbers in the order they commit.
CREATE TABLE webhook_events (
    tenant_id uuid NOT NULL REFERENCES tenants (id),
    id uuid NOT NULL,
    type text NOT NULL CHECK (type IN ('order.placed', 'order.paid', 'order.cancelled', 'order.refunded',
        'good.low_stock')),
    data jsonb NOT NULL,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, id)
);

CREATE TABLE webhook_deliveries (
    tenant_id uuid NOT NULL,
    id uuid NOT NULL,
    endpoint_id uuid NOT NULL,
    event_id uuid NOT NULL,
    seq bigint GENERATED ALWAYS AS IDENTITY,
    status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
    attempts integer NOT NULL DEFAULT 0,
    due_at timestamptz NOT NULL,
    claimed_until timestamptz,
    last_attempt_at timestamptz,
    last_status integer,
    last_response text CHECK (length(last_response) <= 1000),
    last_error text CHECK (length(last_error) <= 500),
    delivered_at timestamptz,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, id),
    UNIQUE (tenant_id, endpoint_id, event_id),
    FOREIGN KEY (tenant_id, endpoint_id) REFERENCES webhook_endpoints (tenant_id, id),
    FOREIGN KEY (tenant_id, event_id) REFERENCES webhook_events (tenant_id, id)
);
-- The worker's claim: the first pending delivery of each endpoint.
CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (endpoint_id, seq) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (due_at) WHERE status = 'pending';
-- An endpoint's deliveries, newest first.
CREATE INDEX webhook_deliveries_newest ON webhook_deliveries (tenant_id, endpoint_id, seq DESC);

ALTER TABLE webhook_events ENABLE ROW LEVEL SECURITY;
ALTER TABLE webhook_events FORCE ROW LEVEL SECURITY;
CREATE POLICY webhook_events_visible ON webhook_events USING (app_sees(tenant_id)) WITH CHECK (app_sees(tenant_id));
GRANT SELECT ON webhook_events TO backoffice_app;

ALTER TABLE webhook_deliveries ENABLE ROW LEVEL SECURITY;
ALTER TABLE webhook_deliveries FORCE ROW LEVEL SECURITY;
CREATE POLICY webhook_deliveries_visible ON webhook_deliveries
    USING (app_sees(tenant_id)) WITH CHECK (app_sees(tenant_id));
GRANT SELECT, UPDATE ON webhook_deliveries TO backoffice_app;

-- Writes event `p_type` of `p_tenant` with `p_data` at `p_at` (the change's time, as the service
-- keeps it), and a delivery due then to each enabled endpoint of the tenant that asked for the
-- type (locked until the transaction ends).
CREATE FUNCTION webhook_event_write(p_tenant uuid, p_type text, p_data jsonb, p_at timestamptz) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = public, pg_temp
    AS $$
DECLARE
    v_event uuid := gen_random_uuid();
    v_now timestamptz := coalesce(p_at, clock_timestamp());
BEGIN
    PERFORM 1 FROM webhook_endpoints
        WHERE tenant_id = p_tenant AND status = 'enabled' AND p_type = ANY (events)
        ORDER BY id FOR UPDATE;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    INSERT INTO webhook_events (tenant_id, id, type, data, created_at)
        VALUES (p_tenant, v_event, p_type, p_data, v_now);
    INSERT INTO webhook_deliveries (tenant_id, id, endpoint_id, event_id, due_at, created_at)
        SELECT p_tenant, gen_random_uuid(), e.id, v_event, v_now, v_now
        FROM webhook_endpoints e
        WHERE e.tenant_id = p_tenant AND e.status = 'enabled' AND p_type = ANY (e.events)
        ORDER BY e.id;
END $$;
REVOKE ALL ON FUNCTION webhook_event_write(uuid, text, jsonb, timestamptz) FROM PUBLIC;

-- An order's events: placed when written, then paid, cancelled or refunded as its status moves.
CREATE FUNCTION webhook_order_events() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = public, pg_temp
    AS $$
DECLARE
    v_type text;
BEGIN
    IF TG_OP = 'INSERT' THEN
        v_type := 'order.placed';
    ELSIF NEW.status IS DISTINCT FROM OLD.status AND NEW.status IN ('paid', 'cancelled', 'refunded') THEN
        v_type := 'order.' || NEW.status;
    ELSE
        RETURN NULL;
    END IF;
    PERFORM webhook_event_write(NEW.tenant_id, v_type, jsonb_build_object(
        'object', 'order', 'id', NEW.id, 'status', NEW.status, 'total_cents', NEW.total_cents,
        'total_fitpoints', NEW.total_fitpoints, 'line_count', NEW.line_count,
        'placed_at', NEW.created_at, 'updated_at', NEW.updated_at), NEW.updated_at);
    RETURN NULL;
END $$;
CREATE TRIGGER webhook_order_events AFTER INSERT OR UPDATE OF status ON orders
    FOR EACH ROW EXECUTE FUNCTION webhook_order_events();

-- A good's low-stock event: its stock fell to 5 or below from above 5.
CREATE FUNCTION webhook_good_events() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = public, pg_temp
    AS $$
BEGIN
    IF NEW.stock <= 5 AND OLD.stock > 5 THEN
        PERFORM webhook_event_write(NEW.tenant_id, 'good.low_stock', jsonb_build_object(
            'object', 'good', 'id', NEW.id, 'sku', NEW.sku, 'stock', NEW.stock, 'updated_at', NEW.updated_at),
            NEW.updated_at);
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER webhook_good_events AFTER UPDATE OF stock ON goods
    FOR EACH ROW EXECUTE FUNCTION webhook_good_events();
