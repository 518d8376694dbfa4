-- A partner's move that needs the payment provider (ship → capture, cancel → void, refund →
-- refund) runs in two transactions around the provider's call, as checkout does: the first marks
-- the payment with the operation under way (pending_operation, with what the move records once
-- it succeeds: carrier and tracking number, reason), the second records the verdict and moves the
-- order. While an operation is under way no other move of the order starts. Reconciliation asks
-- again (the same idempotency key: the provider does it once) for an operation left under way by
-- a crash.

ALTER TABLE payments
    ADD COLUMN pending_operation text CHECK (pending_operation IN ('capture', 'void', 'refund')),
    ADD COLUMN pending_detail jsonb CHECK (pending_detail IS NULL OR jsonb_typeof(pending_detail) = 'object'),
    ADD COLUMN pending_since timestamptz,
    ADD CONSTRAINT payments_pending_operation_complete CHECK ((pending_operation IS NULL) = (pending_since IS NULL));
CREATE INDEX payments_operations_under_way ON payments (pending_since) WHERE pending_operation IS NOT NULL;
