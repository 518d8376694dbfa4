-- A webhook finds its payment by (provider, provider payment id) alone, before it knows any
-- tenant: that pair must name one payment across all tenants, not one per tenant.
DROP INDEX payments_by_provider_id;
CREATE UNIQUE INDEX payments_by_provider_id ON payments (provider, provider_payment_id);
