-- Retail partners: shop applications, shop profiles and goods.
--
-- A shop application arrives without a token (the public form). Its eligibility checks run when
-- it is submitted and are stored with it. The payout bank account is never stored: only the
-- payment provider's reference to the verified account and its last four digits. Applications
-- belong to the platform (managers review them). Approval makes a tenant with its shop profile.
--
-- Goods belong to a tenant: the partner's staff see and change only theirs (row-level security);
-- the app's catalog read (a platform principal) sees active goods of every partner.

CREATE TABLE shop_applications (
    id uuid PRIMARY KEY,
    legal_name text NOT NULL CHECK (length(legal_name) <= 200),
    contact_email text NOT NULL CHECK (length(contact_email) BETWEEN 3 AND 254),
    tax_id text NOT NULL CHECK (length(tax_id) <= 50),
    address jsonb NOT NULL CHECK (jsonb_typeof(address) = 'object'),
    payout_account_holder text NOT NULL CHECK (length(payout_account_holder) <= 200),
    payout_account_last4 text NOT NULL CHECK (payout_account_last4 ~ '^[0-9]{0,4}$'),
    payout_account_ref text CHECK (length(payout_account_ref) <= 200),
    checks jsonb NOT NULL CHECK (jsonb_typeof(checks) = 'array'),
    eligible boolean NOT NULL,
    status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'rejected')),
    decided_at timestamptz,
    decided_by uuid,
    decision_reason text CHECK (length(decision_reason) <= 1000),
    tenant_id uuid REFERENCES tenants (id),
    source_ip text CHECK (length(source_ip) <= 64),
    submitted_at timestamptz NOT NULL,
    version bigint NOT NULL DEFAULT 1,
    CHECK ((status = 'pending') = (decided_at IS NULL)),
    CHECK ((status = 'approved') = (tenant_id IS NOT NULL))
);
-- The waiting list in the order applications arrived; the duplicate check by tax id.
CREATE INDEX shop_applications_queue ON shop_applications (status, submitted_at, id);
CREATE INDEX shop_applications_tax_id ON shop_applications (tax_id) WHERE status <> 'rejected';

ALTER TABLE shop_applications ENABLE ROW LEVEL SECURITY;
ALTER TABLE shop_applications FORCE ROW LEVEL SECURITY;
CREATE POLICY shop_applications_platform_only ON shop_applications USING (app_is_platform()) WITH CHECK (app_is_platform());
GRANT SELECT, INSERT, UPDATE ON shop_applications TO backoffice_app;

-- What an approved shop is: one row per partner tenant, its tax id taken once.
CREATE TABLE shop_profiles (
    tenant_id uuid PRIMARY KEY REFERENCES tenants (id),
    legal_name text NOT NULL CHECK (length(legal_name) BETWEEN 1 AND 200),
    contact_email text NOT NULL CHECK (length(contact_email) BETWEEN 3 AND 254),
    tax_id text NOT NULL UNIQUE CHECK (length(tax_id) BETWEEN 1 AND 50),
    address jsonb NOT NULL CHECK (jsonb_typeof(address) = 'object'),
    payout_account_ref text NOT NULL CHECK (length(payout_account_ref) <= 200),
    payout_account_last4 text NOT NULL CHECK (payout_account_last4 ~ '^[0-9]{4}$'),
    application_id uuid NOT NULL UNIQUE REFERENCES shop_applications (id),
    created_at timestamptz NOT NULL DEFAULT now(),
    version bigint NOT NULL DEFAULT 1
);
ALTER TABLE shop_profiles ENABLE ROW LEVEL SECURITY;
ALTER TABLE shop_profiles FORCE ROW LEVEL SECURITY;
CREATE POLICY shop_profiles_visible ON shop_profiles USING (app_sees(tenant_id)) WITH CHECK (app_is_platform());
GRANT SELECT, INSERT, UPDATE ON shop_profiles TO backoffice_app;

CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE TABLE goods (
    tenant_id uuid NOT NULL REFERENCES tenants (id),
    id uuid PRIMARY KEY,
    sku text NOT NULL CHECK (sku ~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$'),
    name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    description text NOT NULL DEFAULT '' CHECK (length(description) <= 5000),
    category text NOT NULL CHECK (category ~ '^[a-z0-9][a-z0-9-]{1,62}$'),
    price_cents bigint CHECK (price_cents BETWEEN 1 AND 100000000),
    price_fitpoints bigint CHECK (price_fitpoints BETWEEN 1 AND 100000000),
    stock integer NOT NULL CHECK (stock BETWEEN 0 AND 1000000000),
    status text NOT NULL DEFAULT 'draft' CHECK (status IN ('draft', 'active', 'archived')),
    image_urls text[] NOT NULL DEFAULT '{}' CHECK (cardinality(image_urls) <= 10),
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    version bigint NOT NULL DEFAULT 1,
    UNIQUE (tenant_id, sku),
    CHECK (price_cents IS NOT NULL OR price_fitpoints IS NOT NULL)
);
-- A partner's goods by sku (its list and export); the catalog's active goods by name, by
-- category, and searched by name.
CREATE INDEX goods_catalog ON goods (name, id) WHERE status = 'active';
CREATE INDEX goods_catalog_category ON goods (category, name, id) WHERE status = 'active';
CREATE INDEX goods_catalog_search ON goods USING gin (name gin_trgm_ops) WHERE status = 'active';

ALTER TABLE goods ENABLE ROW LEVEL SECURITY;
ALTER TABLE goods FORCE ROW LEVEL SECURITY;
CREATE POLICY goods_visible ON goods USING (app_sees(tenant_id)) WITH CHECK (app_sees(tenant_id));
GRANT SELECT, INSERT, UPDATE ON goods TO backoffice_app;
