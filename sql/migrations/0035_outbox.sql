-- Mail the service sends, written in the same transaction as the change that sends it (a
-- transactional outbox) and delivered by the outbox delivery service: claimed for a while, sent,
-- marked sent. A claim that lapses (the process died mid-send) is taken again: a message is sent
-- at least once, always under the same Message-ID, so a receiver can tell a repeat.
--
-- A row never holds a credential: an invitation's link secret is derived at delivery from the
-- invitation's id under a key of the server's (never in the database), so the row keeps only the
-- invitation's id (reference) and the values its template shows.

CREATE TABLE outbox (
    id uuid PRIMARY KEY,
    tenant_id uuid NOT NULL,
    kind text NOT NULL CHECK (kind IN ('invitation', 'lockout_notice', 'shop_decision')),
    recipient text NOT NULL CHECK (recipient LIKE '%@%' AND recipient !~ '[\r\n]'),
    operator_id uuid,
    reference uuid,
    fields jsonb NOT NULL,
    message_id text NOT NULL UNIQUE,
    created_at timestamptz NOT NULL,
    due_at timestamptz NOT NULL,
    claimed_until timestamptz,
    attempts integer NOT NULL DEFAULT 0,
    last_error text,
    sent_at timestamptz
);
CREATE INDEX outbox_due ON outbox (due_at) WHERE sent_at IS NULL;
CREATE INDEX outbox_tenant ON outbox (tenant_id, created_at);
ALTER TABLE outbox ENABLE ROW LEVEL SECURITY;
ALTER TABLE outbox FORCE ROW LEVEL SECURITY;
CREATE POLICY outbox_visible ON outbox USING (app_sees(tenant_id)) WITH CHECK (app_sees(tenant_id));
GRANT SELECT, INSERT, UPDATE ON outbox TO backoffice_app;
ALTER TABLE outbox ADD COLUMN gave_up_at timestamptz;
DROP INDEX outbox_due;
CREATE INDEX outbox_due ON outbox (due_at) WHERE sent_at IS NULL AND gave_up_at IS NULL;
