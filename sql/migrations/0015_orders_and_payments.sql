-- Orders, their lines, card payments and the payment provider's webhooks.
--
-- An order belongs to the partner (tenant) whose goods it holds; the partner's staff see it
-- (row-level security) but the API never shows them the customer's id. Lines keep the price
-- paid. A payment is the order's card authorization: the database keeps capture within the
-- authorization and refunds within the capture, and a provider payment id completes at most one
-- payment. Webhook events are kept by (provider, event id), so a delivery is applied once.

CREATE TABLE orders (
    tenant_id uuid NOT NULL REFERENCES tenants (id),
    id uuid PRIMARY KEY,
    customer_id uuid NOT NULL,
    status text NOT NULL CHECK (status IN ('pending_payment', 'paid', 'accepted', 'shipped', 'delivered', 'cancelled', 'refunded')),
    total_cents bigint NOT NULL CHECK (total_cents >= 0),
    total_fitpoints bigint NOT NULL CHECK (total_fitpoints >= 0),
    shipping_name text NOT NULL CHECK (length(shipping_name) BETWEEN 1 AND 200),
    shipping_address jsonb NOT NULL CHECK (jsonb_typeof(shipping_address) = 'object'),
    carrier text CHECK (length(carrier) <= 100),
    tracking_number text CHECK (length(tracking_number) <= 100),
    status_reason text CHECK (length(status_reason) <= 1000),
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    version bigint NOT NULL DEFAULT 1,
    CHECK (total_cents > 0 OR total_fitpoints > 0),
    CHECK ((status IN ('shipped', 'delivered')) <= (carrier IS NOT NULL AND tracking_number IS NOT NULL))
);
-- A partner's orders, newest first (its list), and by state.
CREATE INDEX orders_by_tenant ON orders (tenant_id, created_at DESC, id DESC);
CREATE INDEX orders_by_tenant_status ON orders (tenant_id, status, created_at DESC, id DESC);
CREATE INDEX orders_by_customer ON orders (customer_id);
CREATE INDEX orders_newest ON orders (created_at DESC, id DESC);

CREATE TABLE order_lines (
    tenant_id uuid NOT NULL,
    order_id uuid NOT NULL REFERENCES orders (id),
    line integer NOT NULL CHECK (line >= 1),
    good_id uuid NOT NULL REFERENCES goods (id),
    sku text NOT NULL,
    name text NOT NULL,
    quantity integer NOT NULL CHECK (quantity BETWEEN 1 AND 100),
    paid_in text NOT NULL CHECK (paid_in IN ('usd', 'fitpoints')),
    unit_price bigint NOT NULL CHECK (unit_price >= 1),
    PRIMARY KEY (order_id, line)
);

CREATE TABLE payments (
    tenant_id uuid NOT NULL,
    id uuid PRIMARY KEY,
    order_id uuid NOT NULL UNIQUE REFERENCES orders (id),
    provider text NOT NULL CHECK (length(provider) <= 50),
    provider_payment_id text CHECK (length(provider_payment_id) <= 200),
    status text NOT NULL CHECK (status IN ('pending', 'authorized', 'captured', 'voided', 'refunded', 'failed')),
    amount_cents bigint NOT NULL CHECK (amount_cents > 0),
    authorized_cents bigint NOT NULL DEFAULT 0 CHECK (authorized_cents >= 0),
    captured_cents bigint NOT NULL DEFAULT 0,
    refunded_cents bigint NOT NULL DEFAULT 0,
    failure_code text CHECK (length(failure_code) <= 100),
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    CONSTRAINT payments_capture_within_authorization CHECK (captured_cents BETWEEN 0 AND authorized_cents),
    CONSTRAINT payments_refund_within_capture CHECK (refunded_cents BETWEEN 0 AND captured_cents),
    CHECK (authorized_cents <= amount_cents),
    UNIQUE (provider, provider_payment_id)
);
CREATE INDEX payments_open ON payments (status, created_at) WHERE status = 'pending';

CREATE TABLE payment_webhook_events (
    provider text NOT NULL,
    event_id text NOT NULL CHECK (length(event_id) BETWEEN 1 AND 200),
    type text NOT NULL CHECK (length(type) <= 100),
    provider_payment_id text CHECK (length(provider_payment_id) <= 200),
    outcome text NOT NULL CHECK (length(outcome) <= 200),
    received_at timestamptz NOT NULL,
    PRIMARY KEY (provider, event_id)
);

ALTER TABLE orders ENABLE ROW LEVEL SECURITY;
ALTER TABLE orders FORCE ROW LEVEL SECURITY;
CREATE POLICY orders_visible ON orders USING (app_sees(tenant_id)) WITH CHECK (app_sees(tenant_id));
GRANT SELECT, INSERT, UPDATE ON orders TO backoffice_app;
ALTER TABLE order_lines ENABLE ROW LEVEL SECURITY;
ALTER TABLE order_lines FORCE ROW LEVEL SECURITY;
CREATE POLICY order_lines_visible ON order_lines USING (app_sees(tenant_id)) WITH CHECK (app_sees(tenant_id));
GRANT SELECT, INSERT ON order_lines TO backoffice_app;
ALTER TABLE payments ENABLE ROW LEVEL SECURITY;
ALTER TABLE payments FORCE ROW LEVEL SECURITY;
CREATE POLICY payments_visible ON payments USING (app_sees(tenant_id)) WITH CHECK (app_sees(tenant_id));
GRANT SELECT, INSERT, UPDATE ON payments TO backoffice_app;
ALTER TABLE payment_webhook_events ENABLE ROW LEVEL SECURITY;
ALTER TABLE payment_webhook_events FORCE ROW LEVEL SECURITY;
CREATE POLICY payment_webhook_events_platform_only ON payment_webhook_events USING (app_is_platform()) WITH CHECK (app_is_platform());
GRANT SELECT, INSERT ON payment_webhook_events TO backoffice_app;
GRANT UPDATE (outcome) ON payment_webhook_events TO backoffice_app;

-- An order redeems FitPoints once and gets them back at most once.
CREATE UNIQUE INDEX fitpoints_transfers_order_once ON fitpoints_transfers (kind, source_event_id)
    WHERE kind IN ('redemption', 'refund') AND source_event_id LIKE 'order:%';

-- Gives back the FitPoints a cancelled or refunded order took, once. A partner's transaction may
-- call it for its own orders (it sees only those) though it cannot write the platform's ledger:
-- the function acts for the platform only for the one transfer, from the redemption account to
-- the customer's wallet, of exactly what the order redeemed. Returns the points given back (0
-- when there were none, or they were given back already).
CREATE FUNCTION return_order_fitpoints(p_order uuid, p_actor uuid, p_reason text, p_at timestamptz) RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
    AS $$
DECLARE
    v_customer uuid;
    v_points bigint;
    v_caller text := current_setting('app.tenant_id', true);
    v_done bigint;
BEGIN
    SELECT customer_id, total_fitpoints INTO v_customer, v_points FROM orders
        WHERE id = p_order AND app_sees(tenant_id) AND status IN ('cancelled', 'refunded');
    IF NOT FOUND OR v_points = 0 THEN
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
REVOKE ALL ON FUNCTION return_order_fitpoints(uuid, uuid, text, timestamptz) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION return_order_fitpoints(uuid, uuid, text, timestamptz) TO backoffice_app;
