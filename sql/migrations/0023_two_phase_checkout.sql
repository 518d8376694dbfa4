-- Checkout in two phases: no transaction waits on the payment provider.
--
-- 1. One transaction reserves the stock, redeems the FitPoints and records the order as
--    pending_payment with its payment `authorizing` and the idempotency key the provider will be
--    sent (provider_idempotency_key, derived from the client's Idempotency-Key).
-- 2. The provider is called with no transaction open and no connection held.
-- 3. A second transaction records its verdict: authorized → the order paid; pending → it waits
--    for the webhook; declined → the payment failed and the order payment_failed, its stock and
--    FitPoints given back.
-- A crash or a timeout between 1 and 3 leaves the payment `authorizing`; reconciliation asks the
-- provider for the payment made under the order's reference and records what it says (none made:
-- failed, `not_attempted`), so no reservation and no hold is left behind.

ALTER TABLE orders DROP CONSTRAINT orders_status_check;
ALTER TABLE orders ADD CONSTRAINT orders_status_check
    CHECK (status IN ('pending_payment', 'paid', 'accepted', 'shipped', 'delivered', 'cancelled', 'refunded', 'payment_failed'));

ALTER TABLE payments DROP CONSTRAINT payments_status_check;
ALTER TABLE payments ADD CONSTRAINT payments_status_check
    CHECK (status IN ('authorizing', 'pending', 'authorized', 'captured', 'voided', 'refunded', 'failed'));
ALTER TABLE payments ADD COLUMN provider_idempotency_key text CHECK (length(provider_idempotency_key) <= 200);
-- Reconciliation's work: payments whose verdict is not recorded yet, oldest first.
DROP INDEX payments_open;
CREATE INDEX payments_open ON payments (created_at) WHERE status IN ('pending', 'authorizing');

-- A failed payment's order gives its FitPoints back as a cancelled one does.
CREATE OR REPLACE FUNCTION return_order_fitpoints(p_order uuid, p_actor uuid, p_reason text, p_at timestamptz) RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
    AS $$
DECLARE
    v_customer uuid;
    v_points bigint;
    v_caller text := current_setting('app.tenant_id', true);
    v_done bigint;
BEGIN
    SELECT customer_id, total_fitpoints INTO v_customer, v_points FROM orders
        WHERE id = p_order AND app_sees(tenant_id) AND status IN ('cancelled', 'refunded', 'payment_failed');
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
