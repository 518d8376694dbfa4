-- Refunds of subscription invoices, and who ended a subscription and why.
--
-- A refund is asked in two phases, as the provider's other calls are: a `pending` row under the
-- invoice's row lock (the amount never more than the invoice's paid amount less its refunds made
-- or under way, so refunds at once queue on the lock and their sum holds), the provider asked under
-- the key `refund:<id>`, then the verdict: `succeeded` adds the amount to the invoice's
-- refunded_cents (which a CHECK keeps at most the amount), `failed` keeps the provider's code.
CREATE TABLE invoice_refunds (
    id uuid PRIMARY KEY,
    invoice_id uuid NOT NULL REFERENCES invoices (id),
    customer_id uuid NOT NULL REFERENCES customers (id),
    amount_cents bigint NOT NULL CHECK (amount_cents > 0),
    reason text NOT NULL CHECK (length(reason) BETWEEN 1 AND 500),
    status text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
    provider_key text NOT NULL UNIQUE,
    provider_refund_id text,
    failure_code text,
    requested_by uuid,
    created_at timestamptz NOT NULL,
    decided_at timestamptz,
    CHECK ((status = 'pending') = (decided_at IS NULL))
);
CREATE INDEX invoice_refunds_by_invoice ON invoice_refunds (invoice_id, created_at, id);
CREATE INDEX invoice_refunds_by_customer ON invoice_refunds (customer_id);
ALTER TABLE invoice_refunds ENABLE ROW LEVEL SECURITY;
ALTER TABLE invoice_refunds FORCE ROW LEVEL SECURITY;
CREATE POLICY invoice_refunds_platform_only ON invoice_refunds USING (app_is_platform()) WITH CHECK (app_is_platform());
GRANT SELECT, INSERT, UPDATE ON invoice_refunds TO backoffice_app;

-- A subscription a manager ended at once: who, and the reason given (the customer's own cancellation
-- at period end has none).
ALTER TABLE subscriptions ADD COLUMN cancel_reason text CHECK (length(cancel_reason) BETWEEN 1 AND 500),
    ADD COLUMN canceled_by uuid;
-- The managers' lists: by status, newest change first.
CREATE INDEX subscriptions_by_status ON subscriptions (status, updated_at DESC, id DESC);
CREATE INDEX subscriptions_by_customer ON subscriptions (customer_id, created_at DESC);
