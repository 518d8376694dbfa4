-- Customers' subscription state, synced from the app: message audiences and challenge
-- eligibility depend on it. `renews_at` only for an active subscription.
ALTER TABLE customers
    ADD COLUMN subscription text NOT NULL DEFAULT 'none' CHECK (subscription IN ('none', 'active', 'lapsed')),
    ADD COLUMN renews_at timestamptz,
    ADD CONSTRAINT customers_renews_only_active CHECK (renews_at IS NULL OR subscription = 'active');
