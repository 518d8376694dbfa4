-- Subscription billing: a customer's subscriptions to the plans of policies/billing/plans.yaml, and
-- one invoice per subscription and period, the record of its charge through the payment provider.
--
-- Exactly once: an invoice is unique per subscription and period start, and the provider's
-- idempotency key is derived from the invoice's id, so a renewal run twice (two processes, or one
-- restarted after a crash) finds the invoice and asks the provider about it, never charging again.
-- At most one live subscription per customer: a partial unique index, so 30 subscribes at once
-- make one. Money in US cents; no tax.
CREATE TABLE subscriptions (
    id uuid PRIMARY KEY,
    customer_id uuid NOT NULL REFERENCES customers (id),
    plan text NOT NULL CHECK (length(plan) BETWEEN 1 AND 32),
    price_cents bigint NOT NULL CHECK (price_cents > 0),
    billing_interval text NOT NULL CHECK (billing_interval IN ('month', 'year')),
    -- incomplete: its first charge not yet answered; trialing: free until trial_ends_at; active: paid
    -- for the current period; past_due: a renewal declined, retried on the policy's schedule, access
    -- kept; canceled: ended by the customer or a manager; lapsed: the last retry failed.
    status text NOT NULL CHECK (status IN ('incomplete', 'trialing', 'active', 'past_due', 'canceled', 'lapsed')),
    -- The provider's token for the saved payment method (never card data).
    payment_method text NOT NULL CHECK (payment_method ~ '^pm_[A-Za-z0-9_]{1,64}$'),
    anchor timestamptz,
    current_period_start timestamptz,
    current_period_end timestamptz CHECK (current_period_end > current_period_start),
    trial_ends_at timestamptz,
    cancel_at_period_end boolean NOT NULL DEFAULT false,
    ended_at timestamptz,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    version bigint NOT NULL DEFAULT 1,
    CHECK ((status IN ('canceled', 'lapsed')) = (ended_at IS NOT NULL)),
    CHECK (status IN ('incomplete', 'canceled') OR current_period_start IS NOT NULL)
);
CREATE UNIQUE INDEX subscriptions_one_live ON subscriptions (customer_id)
    WHERE status IN ('incomplete', 'trialing', 'active', 'past_due');
-- The renewals due: the live ones whose period has ended.
CREATE INDEX subscriptions_due ON subscriptions (current_period_end, id) WHERE status IN ('active', 'past_due');

CREATE TABLE invoices (
    id uuid PRIMARY KEY,
    subscription_id uuid NOT NULL REFERENCES subscriptions (id),
    customer_id uuid NOT NULL REFERENCES customers (id),
    period_start timestamptz NOT NULL,
    period_end timestamptz NOT NULL CHECK (period_end > period_start),
    amount_cents bigint NOT NULL CHECK (amount_cents >= 0),
    -- open: its charge under way or to be retried; paid; failed: every retry declined; void.
    status text NOT NULL CHECK (status IN ('open', 'paid', 'failed', 'void')),
    provider text NOT NULL,
    provider_key text NOT NULL UNIQUE,
    provider_payment_id text,
    failure_code text,
    attempts integer NOT NULL DEFAULT 0,
    refunded_cents bigint NOT NULL DEFAULT 0 CHECK (refunded_cents BETWEEN 0 AND amount_cents),
    created_at timestamptz NOT NULL,
    paid_at timestamptz,
    updated_at timestamptz NOT NULL,
    CHECK ((status = 'paid') = (paid_at IS NOT NULL)),
    UNIQUE (subscription_id, period_start)
);
CREATE INDEX invoices_by_customer ON invoices (customer_id, created_at DESC, id DESC);

ALTER TABLE subscriptions ENABLE ROW LEVEL SECURITY;
ALTER TABLE subscriptions FORCE ROW LEVEL SECURITY;
CREATE POLICY subscriptions_platform_only ON subscriptions USING (app_is_platform()) WITH CHECK (app_is_platform());
GRANT SELECT, INSERT, UPDATE ON subscriptions TO backoffice_app;
ALTER TABLE invoices ENABLE ROW LEVEL SECURITY;
ALTER TABLE invoices FORCE ROW LEVEL SECURITY;
CREATE POLICY invoices_platform_only ON invoices USING (app_is_platform()) WITH CHECK (app_is_platform());
GRANT SELECT, INSERT, UPDATE ON invoices TO backoffice_app;
