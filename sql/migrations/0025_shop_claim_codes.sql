-- Approval no longer hands the new partner admin's credential to the manager who approves. The
-- applicant gets a claim code in the answer to its application (only there: stored as its SHA-256),
-- and, once approved, redeems it once, within 14 days of applying, for the first admin's token.

ALTER TABLE shop_applications
    ADD COLUMN claim_hash bytea,
    ADD COLUMN claim_expires_at timestamptz,
    ADD COLUMN claimed_at timestamptz,
    ADD CONSTRAINT shop_applications_claim_complete CHECK ((claim_hash IS NULL) = (claim_expires_at IS NULL));
CREATE UNIQUE INDEX shop_applications_claim ON shop_applications (claim_hash) WHERE claim_hash IS NOT NULL;
