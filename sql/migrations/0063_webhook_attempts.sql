-- Every attempt of a webhook delivery, kept: when, how long, the receiver's status and the start of
-- its answer (1,000 characters), or the error. A partner reads them to see why a delivery waits.
CREATE TABLE webhook_attempts (
    tenant_id uuid NOT NULL,
    delivery_id uuid NOT NULL,
    number integer NOT NULL CHECK (number > 0),
    attempted_at timestamptz NOT NULL,
    duration_ms integer NOT NULL CHECK (duration_ms >= 0),
    status integer,
    response text CHECK (length(response) <= 1000),
    error text CHECK (length(error) <= 500),
    PRIMARY KEY (tenant_id, delivery_id, number),
    FOREIGN KEY (tenant_id, delivery_id) REFERENCES webhook_deliveries (tenant_id, id)
);
ALTER TABLE webhook_attempts ENABLE ROW LEVEL SECURITY;
ALTER TABLE webhook_attempts FORCE ROW LEVEL SECURITY;
CREATE POLICY webhook_attempts_visible ON webhook_attempts USING (app_sees(tenant_id)) WITH CHECK (app_sees(tenant_id));
GRANT SELECT, INSERT ON webhook_attempts TO backoffice_app;

-- A replay sends a delivery again (`webhook_deliveries.replay`): pending, due now, and given three
-- days again from the replay before it fails.
ALTER TABLE webhook_deliveries ADD COLUMN replayed_at timestamptz;

-- The same function as 0062's, reading the endpoints once: locked, in id order, then written for.
CREATE OR REPLACE FUNCTION webhook_event_write(p_tenant uuid, p_type text, p_data jsonb, p_at timestamptz)
    RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = public, pg_temp
    AS $$
DECLARE
    v_event uuid := gen_random_uuid();
    v_now timestamptz := coalesce(p_at, clock_timestamp());
    v_endpoints uuid[];
BEGIN
    SELECT array_agg(id ORDER BY id) INTO v_endpoints FROM (
        SELECT id FROM webhook_endpoints
        WHERE tenant_id = p_tenant AND status = 'enabled' AND p_type = ANY (events)
        ORDER BY id FOR UPDATE) locked;
    IF v_endpoints IS NULL THEN
        RETURN;
    END IF;
    INSERT INTO webhook_events (tenant_id, id, type, data, created_at)
        VALUES (p_tenant, v_event, p_type, p_data, v_now);
    INSERT INTO webhook_deliveries (tenant_id, id, endpoint_id, event_id, due_at, created_at)
        SELECT p_tenant, gen_random_uuid(), endpoint, v_event, v_now, v_now
        FROM unnest(v_endpoints) WITH ORDINALITY AS e (endpoint, position)
        ORDER BY position;
END $$;
