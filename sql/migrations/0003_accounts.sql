-- Customer accounts synced from the mobile app, their locks, login attempts and appeals.
-- Customers belong to the platform: only platform sessions see them.

CREATE TABLE customers (
    id uuid PRIMARY KEY,
    email text COLLATE "C" NOT NULL CHECK (length(email) BETWEEN 3 AND 254),
    display_name text NOT NULL CHECK (length(display_name) <= 200),
    status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'locked', 'deleted')),
    failed_logins integer NOT NULL DEFAULT 0,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    deleted_at timestamptz,
    version bigint NOT NULL DEFAULT 1
);
CREATE INDEX customers_email ON customers (email, id);
CREATE INDEX customers_deleted ON customers (deleted_at) WHERE status = 'deleted';

ALTER TABLE customers ENABLE ROW LEVEL SECURITY;
CREATE POLICY customers_platform_only ON customers USING (app_is_platform()) WITH CHECK (app_is_platform());
GRANT SELECT, INSERT, UPDATE, DELETE ON customers TO backoffice_app;

-- A lock is a record of its own: why, by whom, until when, and who lifted it.
CREATE TABLE account_locks (
    id uuid PRIMARY KEY,
    customer_id uuid NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
    cause text NOT NULL CHECK (cause IN ('manual', 'failed_logins')),
    reason text NOT NULL,
    failed_attempts integer,
    locked_by uuid,
    locked_at timestamptz NOT NULL DEFAULT now(),
    until timestamptz,
    lifted_at timestamptz,
    lifted_by uuid,
    lift_reason text
);
CREATE UNIQUE INDEX account_locks_open ON account_locks (customer_id) WHERE lifted_at IS NULL;
CREATE INDEX account_locks_expiring ON account_locks (until) WHERE lifted_at IS NULL AND until IS NOT NULL;

ALTER TABLE account_locks ENABLE ROW LEVEL SECURITY;
CREATE POLICY account_locks_platform_only ON account_locks USING (app_is_platform()) WITH CHECK (app_is_platform());
GRANT SELECT, INSERT, UPDATE ON account_locks TO backoffice_app;

-- Login attempts as reported by the app: the evidence behind a failed-logins lock.
CREATE TABLE login_attempts (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    customer_id uuid NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
    succeeded boolean NOT NULL,
    occurred_at timestamptz NOT NULL DEFAULT now(),
    request_id text
);
CREATE INDEX login_attempts_customer ON login_attempts (customer_id, id);

ALTER TABLE login_attempts ENABLE ROW LEVEL SECURITY;
CREATE POLICY login_attempts_platform_only ON login_attempts USING (app_is_platform()) WITH CHECK (app_is_platform());
GRANT SELECT, INSERT ON login_attempts TO backoffice_app;

CREATE TABLE appeals (
    id uuid PRIMARY KEY,
    customer_id uuid NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
    lock_id uuid NOT NULL REFERENCES account_locks (id) ON DELETE CASCADE,
    message text NOT NULL,
    status text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'upheld', 'lifted')),
    created_at timestamptz NOT NULL DEFAULT now(),
    resolved_at timestamptz,
    resolved_by uuid,
    resolution_reason text
);
CREATE UNIQUE INDEX appeals_open_per_lock ON appeals (lock_id) WHERE status = 'open';
CREATE INDEX appeals_status ON appeals (status, created_at, id);

ALTER TABLE appeals ENABLE ROW LEVEL SECURITY;
CREATE POLICY appeals_platform_only ON appeals USING (app_is_platform()) WITH CHECK (app_is_platform());
GRANT SELECT, INSERT, UPDATE ON appeals TO backoffice_app;
