-- Plan changes and price changes.
--
-- A change of plan (monthly <-> annual) starts a new period at once: the unused part of the current
-- period's price is a credit against the new plan's price; what is left to pay is charged at once,
-- and what is left over is kept as `credit_cents`, taken off the invoices that follow (an invoice
-- records the credit it used in `credit_applied_cents`; one the credit pays whole is paid at once,
-- with nothing asked of the provider).
--
-- A plan's new price (policies/billing/plans.yaml) reaches a subscription only after its customer is
-- told by mail: the renewal run notes `next_price_cents` with `next_price_from` (the policy's notice
-- days after the mail), and the first renewal starting then or later bills it.
ALTER TABLE subscriptions
    ADD COLUMN credit_cents bigint NOT NULL DEFAULT 0 CHECK (credit_cents >= 0),
    ADD COLUMN next_price_cents bigint CHECK (next_price_cents > 0),
    ADD COLUMN next_price_from timestamptz,
    ADD CONSTRAINT subscriptions_next_price_dated CHECK ((next_price_cents IS NULL) = (next_price_from IS NULL));
ALTER TABLE invoices
    ADD COLUMN credit_applied_cents bigint NOT NULL DEFAULT 0 CHECK (credit_applied_cents >= 0),
    ADD COLUMN kind text NOT NULL DEFAULT 'renewal' CHECK (kind IN ('first', 'renewal', 'plan_change'));
-- One invoice per subscription and period for its first period and its renewals (what exactly once
-- rests on); a change of plan starts a period of its own at the moment it is made, which may be the
-- moment the current one began.
ALTER TABLE invoices DROP CONSTRAINT invoices_subscription_id_period_start_key;
CREATE UNIQUE INDEX invoices_one_per_period ON invoices (subscription_id, period_start) WHERE kind <> 'plan_change';
