-- Disputes (chargebacks) of a paid subscription invoice, as the provider's signed webhooks tell
-- them: opened (`needs_response`, the amount disputed and the card network's reason), then closed
-- `won` or `lost`. Recorded on the invoice; the money a lost dispute takes is the provider's to
-- move, so nothing else changes here.
ALTER TABLE invoices
    ADD COLUMN dispute_status text CHECK (dispute_status IN ('needs_response', 'won', 'lost')),
    ADD COLUMN disputed_cents bigint CHECK (disputed_cents > 0),
    ADD COLUMN dispute_reason text CHECK (length(dispute_reason) <= 100),
    ADD COLUMN disputed_at timestamptz,
    ADD CONSTRAINT invoices_dispute_whole CHECK ((dispute_status IS NULL) = (disputed_at IS NULL));
CREATE INDEX invoices_by_payment ON invoices (provider, provider_payment_id) WHERE provider_payment_id IS NOT NULL;
