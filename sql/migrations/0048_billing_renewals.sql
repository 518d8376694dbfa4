-- Renewals and dunning: what a renewal run needs to charge each invoice exactly once, across
-- several serve processes and across crashes.
--
-- An invoice to charge is `open` with `next_attempt_at` (the renewal itself, then each retry of the
-- policy's schedule). A run claims it under a row lock taken with SKIP LOCKED, so two runs never
-- claim the same one, and holds it until `claimed_until`; `charging` says a charge was started whose
-- verdict is not yet recorded. A run that finds a lapsed claim with `charging` set asks the provider
-- what became of the charge (under the attempt's reference) before charging anything.
-- The first invoice of a subscription (charged by the subscribe request itself) has no next_attempt_at.
ALTER TABLE invoices
    ADD COLUMN next_attempt_at timestamptz,
    ADD COLUMN claimed_until timestamptz,
    ADD COLUMN charging boolean NOT NULL DEFAULT false,
    ADD CONSTRAINT invoices_attempt_only_open CHECK (status = 'open' OR (next_attempt_at IS NULL AND NOT charging));
CREATE INDEX invoices_to_charge ON invoices (next_attempt_at, id) WHERE status = 'open' AND next_attempt_at IS NOT NULL;

-- When a past_due subscription's access ends unless a retry succeeds (the last retry of the schedule).
ALTER TABLE subscriptions ADD COLUMN grace_ends_at timestamptz,
    ADD CONSTRAINT subscriptions_grace_only_past_due CHECK ((status = 'past_due') = (grace_ends_at IS NOT NULL));
-- Renewals due: the trials and paid periods that have ended.
DROP INDEX subscriptions_due;
CREATE INDEX subscriptions_due ON subscriptions (current_period_end, id) WHERE status IN ('active', 'trialing');

-- The outbox takes every kind of mail a part declares (the templates set aside a kind none writes).
ALTER TABLE outbox DROP CONSTRAINT outbox_kind_check,
    ADD CONSTRAINT outbox_kind_check CHECK (kind ~ '^[a-z][a-z_]{0,63}$');
