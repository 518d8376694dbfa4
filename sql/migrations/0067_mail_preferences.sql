-- Notification mails and who gets them. A topic (`mail_topics`) is offered to some roles; an active
-- person of such a role gets the topic's mail unless they turned it off (`mail_preferences`, on the
-- Security page, through the API, or by a mail's unsubscribe link). Each operator sees and changes
-- only its own choices (row-level security by tenant and by `app_operator()`).
--
-- The mails an event sends are queued by the database in the change's own transaction (the outbox),
-- by triggers, so no path that pays an order, lowers a good's stock or opens an urgent case can
-- forget them: the change's own audit event records the change, the outbox row records the mail.
CREATE TABLE mail_topics (
    topic text PRIMARY KEY CHECK (topic ~ '^[a-z][a-z_]{0,39}$'),
    roles text[] NOT NULL
);
INSERT INTO mail_topics (topic, roles) VALUES
    ('new_order', '{partner_admin,partner_staff}'),
    ('low_stock', '{partner_admin,partner_staff}'),
    ('webhook_endpoint_disabled', '{partner_admin}'),
    ('urgent_case', '{platform_admin,backend_manager,moderator}');
ALTER TABLE mail_topics ENABLE ROW LEVEL SECURITY;
ALTER TABLE mail_topics FORCE ROW LEVEL SECURITY;
-- The same list for every tenant; a session that acts for none sees none.
CREATE POLICY mail_topics_read ON mail_topics FOR SELECT USING (app_tenant() IS NOT NULL);
GRANT SELECT ON mail_topics TO backoffice_app;

CREATE TABLE mail_preferences (
    tenant_id uuid NOT NULL,
    operator_id uuid NOT NULL,
    topic text NOT NULL REFERENCES mail_topics (topic),
    subscribed boolean NOT NULL,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, operator_id, topic),
    FOREIGN KEY (tenant_id, operator_id) REFERENCES operators (tenant_id, id)
);
ALTER TABLE mail_preferences ENABLE ROW LEVEL SECURITY;
ALTER TABLE mail_preferences FORCE ROW LEVEL SECURITY;
-- An operator reads and writes its own choices; the system (no operator) reads every choice of
-- the tenants it sees, as `mail_recipients` does for whoever the transaction acts for.
CREATE POLICY mail_preferences_own ON mail_preferences
    USING (app_sees(tenant_id) AND (operator_id = app_operator() OR app_operator() IS NULL))
    WITH CHECK (app_sees(tenant_id) AND operator_id = app_operator());
GRANT SELECT, INSERT, UPDATE ON mail_preferences TO backoffice_app;

-- Who gets `p_topic`'s mail in `p_tenant`: its active people whose role is offered the topic and who
-- did not turn it off, in a stable order. Row-level security binds the owner too (FORCEd), so the
-- choices are read as the system reads them (no operator) whoever the transaction acts for, and the
-- transaction's operator is put back before returning.
CREATE FUNCTION mail_recipients(p_tenant uuid, p_topic text) RETURNS TABLE (operator_id uuid, email text)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = public, pg_temp
    AS $$
DECLARE
    v_operator text := coalesce(current_setting('app.operator_id', true), '');
BEGIN
    PERFORM set_config('app.operator_id', '', true);
    RETURN QUERY
    SELECT o.id, o.email
    FROM operators o JOIN mail_topics t ON t.topic = p_topic AND o.role = ANY (t.roles)
    WHERE o.tenant_id = p_tenant AND o.status = 'active' AND o.kind = 'person'
        AND NOT EXISTS (SELECT 1 FROM mail_preferences p
            WHERE p.tenant_id = o.tenant_id AND p.operator_id = o.id AND p.topic = p_topic AND NOT p.subscribed)
    ORDER BY o.id;
    PERFORM set_config('app.operator_id', v_operator, true);
END $$;
REVOKE ALL ON FUNCTION mail_recipients(uuid, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION mail_recipients(uuid, text) TO backoffice_app;

-- Queues `p_topic`'s mail (its kind is the topic's name) about `p_reference` to each of its recipients
-- in `p_tenant`, due at `p_at`; `p_fields` are the template's values (text only, never a secret).
CREATE FUNCTION mail_topic_queue(p_tenant uuid, p_topic text, p_reference uuid, p_fields jsonb, p_at timestamptz)
    RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = public, pg_temp
    AS $$
DECLARE
    v_now timestamptz := coalesce(p_at, clock_timestamp());
BEGIN
    INSERT INTO outbox (id, tenant_id, kind, recipient, operator_id, reference, fields, message_id, created_at,
        due_at)
    SELECT r.id, p_tenant, p_topic, r.email, r.operator_id, p_reference, p_fields,
        r.id::text || '@backoffice.healthtrack', v_now, v_now
    FROM (SELECT gen_random_uuid() AS id, operator_id, email FROM mail_recipients(p_tenant, p_topic)) r;
END $$;
REVOKE ALL ON FUNCTION mail_topic_queue(uuid, text, uuid, jsonb, timestamptz) FROM PUBLIC;

-- An order's and a good's triggers (0062) queue their mails too, each in the one trigger that
-- already writes the change's webhook event: a new order to handle when an order became paid
-- (placed paid, or paid later); low stock when a good's stock fell to 5 or below from above 5.
CREATE OR REPLACE FUNCTION webhook_order_events() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = public, pg_temp
    AS $$
DECLARE
    v_type text;
BEGIN
    IF NEW.status = 'paid' AND (TG_OP = 'INSERT' OR OLD.status IS DISTINCT FROM 'paid') THEN
        PERFORM mail_topic_queue(NEW.tenant_id, 'new_order', NEW.id, jsonb_build_object(
            'order_id', NEW.id::text, 'total_cents', NEW.total_cents::text,
            'total_fitpoints', NEW.total_fitpoints::text, 'line_count', NEW.line_count::text), NEW.updated_at);
    END IF;
    IF TG_OP = 'INSERT' THEN
        v_type := 'order.placed';
    ELSIF NEW.status IS DISTINCT FROM OLD.status AND NEW.status IN ('paid', 'cancelled', 'refunded') THEN
        v_type := 'order.' || NEW.status;
    ELSE
        RETURN NULL;
    END IF;
    PERFORM webhook_event_write(NEW.tenant_id, v_type, jsonb_build_object(
        'object', 'order', 'id', NEW.id, 'status', NEW.status, 'total_cents', NEW.total_cents,
        'total_fitpoints', NEW.total_fitpoints, 'line_count', NEW.line_count,
        'placed_at', NEW.created_at, 'updated_at', NEW.updated_at), NEW.updated_at);
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION webhook_good_events() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = public, pg_temp
    AS $$
BEGIN
    IF NEW.stock <= 5 AND OLD.stock > 5 THEN
        PERFORM webhook_event_write(NEW.tenant_id, 'good.low_stock', jsonb_build_object(
            'object', 'good', 'id', NEW.id, 'sku', NEW.sku, 'stock', NEW.stock, 'updated_at', NEW.updated_at),
            NEW.updated_at);
        PERFORM mail_topic_queue(NEW.tenant_id, 'low_stock', NEW.id, jsonb_build_object(
            'good_id', NEW.id::text, 'sku', NEW.sku, 'name', NEW.name, 'stock', NEW.stock::text), NEW.updated_at);
    END IF;
    RETURN NULL;
END $$;

-- An urgent case: a moderation case open at severity 3 or more (urgent, critical), opened so or
-- raised to it (the mail then dated by the raise). The mail names the case and how it was opened,
-- never the content.
CREATE FUNCTION mail_urgent_case() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = public, pg_temp
    AS $$
BEGIN
    IF NEW.status = 'open' AND NEW.severity >= 3 AND (TG_OP = 'INSERT' OR OLD.severity < 3) THEN
        PERFORM mail_topic_queue('00000000-0000-0000-0000-000000000000', 'urgent_case', NEW.id,
            jsonb_build_object('case_id', NEW.id::text, 'content_kind', NEW.content_kind,
                'opened_by', NEW.opened_by, 'severity', NEW.severity::text,
                'rules', array_to_string(NEW.matched_rules, ', ')),
            CASE WHEN TG_OP = 'INSERT' THEN NEW.opened_at ELSE now() END);
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER mail_urgent_case AFTER INSERT OR UPDATE OF severity ON moderation_cases
    FOR EACH ROW EXECUTE FUNCTION mail_urgent_case();
