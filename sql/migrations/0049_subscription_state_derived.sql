-- A customer's subscription state (`customers.subscription`, `renews_at`) is derived from the
-- subscription records, no longer synced by the app: a trigger keeps it in the same statement as
-- every change of a subscription, so the audience rules (messages, challenges, recommendations)
-- read what the records say. The state a customer had from the app becomes a record once:
-- - `active`: an active monthly subscription (999 cents) whose period ends at `renews_at` (or a
--   month from now when none was synced), with no payment method on file: its renewal is declined
--   `no_payment_method` and goes through dunning until the app gives one;
-- - `lapsed`: a lapsed one, ended when the account last changed.
ALTER TABLE subscriptions ALTER COLUMN payment_method DROP NOT NULL;

-- Row-level security is forced on customers and subscriptions, for their owner too: the records are
-- made acting for the platform (this transaction only).
SELECT set_config('app.tenant_id', '00000000-0000-0000-0000-000000000000', true);

INSERT INTO subscriptions (id, customer_id, plan, price_cents, billing_interval, status, payment_method, anchor,
    current_period_start, current_period_end, created_at, updated_at)
SELECT gen_random_uuid(), c.id, 'monthly', 999, 'month', 'active', NULL,
    coalesce(c.renews_at, now() + interval '1 month') - interval '1 month',
    coalesce(c.renews_at, now() + interval '1 month') - interval '1 month',
    coalesce(c.renews_at, now() + interval '1 month'), now(), now()
FROM customers c
WHERE c.subscription = 'active' AND c.status <> 'deleted'
    AND NOT EXISTS (SELECT FROM subscriptions s WHERE s.customer_id = c.id);

INSERT INTO subscriptions (id, customer_id, plan, price_cents, billing_interval, status, payment_method,
    current_period_start, current_period_end, ended_at, created_at, updated_at)
SELECT gen_random_uuid(), c.id, 'monthly', 999, 'month', 'lapsed', NULL,
    c.updated_at - interval '1 month', c.updated_at, c.updated_at, now(), now()
FROM customers c
WHERE c.subscription = 'lapsed' AND c.status <> 'deleted'
    AND NOT EXISTS (SELECT FROM subscriptions s WHERE s.customer_id = c.id);

-- The customer's state from a subscription that changed: live (trialing, active, past_due) is
-- `active`, renewing at its period's end unless past due or canceled at period end; ended
-- (canceled, lapsed) is `lapsed`; an incomplete one (its first charge unanswered) changes nothing.
CREATE FUNCTION subscription_state_to_customer() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE
    v_state text;
    v_renews timestamptz;
BEGIN
    IF NEW.status = 'incomplete' THEN
        RETURN NULL;
    END IF;
    v_state := CASE WHEN NEW.status IN ('trialing', 'active', 'past_due') THEN 'active' ELSE 'lapsed' END;
    v_renews := CASE WHEN NEW.status IN ('trialing', 'active') AND NOT NEW.cancel_at_period_end
        THEN NEW.current_period_end END;
    UPDATE customers SET subscription = v_state, renews_at = v_renews, version = version + 1,
        updated_at = NEW.updated_at
    WHERE id = NEW.customer_id AND (subscription, renews_at) IS DISTINCT FROM (v_state, v_renews);
    RETURN NULL;
END
$$;
CREATE TRIGGER subscriptions_state_to_customer AFTER INSERT OR UPDATE ON subscriptions
    FOR EACH ROW EXECUTE FUNCTION subscription_state_to_customer();
