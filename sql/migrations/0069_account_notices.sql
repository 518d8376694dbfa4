-- A notice a manager sends to one customer's account: a subject and a body the app shows the
-- customer (read through the API, newest first). Why it was sent is the audit event's reason
-- (`accounts.message`). A notice is never changed; it goes with its account when the account is
-- purged. `request_key` is a hash of the sender and the bulk request's Idempotency-Key: a bulk
-- sent again under the same key sends no account a second notice.
CREATE TABLE account_notices (
    id uuid PRIMARY KEY,
    customer_id uuid NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
    subject text NOT NULL CHECK (length(subject) BETWEEN 1 AND 200),
    body text NOT NULL CHECK (length(body) BETWEEN 1 AND 5000),
    sent_by uuid,
    request_key text CHECK (length(request_key) = 32),
    created_at timestamptz NOT NULL
);
CREATE INDEX account_notices_customer ON account_notices (customer_id, created_at DESC, id DESC);
CREATE UNIQUE INDEX account_notices_request ON account_notices (customer_id, request_key) WHERE request_key IS NOT NULL;

ALTER TABLE account_notices ENABLE ROW LEVEL SECURITY;
ALTER TABLE account_notices FORCE ROW LEVEL SECURITY;
CREATE POLICY account_notices_platform_only ON account_notices
    USING (app_is_platform()) WITH CHECK (app_is_platform());
GRANT SELECT, INSERT ON account_notices TO backoffice_app;
