-- Customers' health profiles (synced by the app's backend) and the record of every read of them.
--
-- Health data is read one customer at a time and never without a record: the service role has no
-- privilege on the profile tables at all. It writes through health_profile_sync and reads in two
-- transactions: health_access_append records the access event (who, whose, when, purpose, via) and
-- commits; only then does health_profile_read(event) return that one customer's profile, once per
-- event, refusing an event its own transaction wrote (which a rollback could take back after the
-- values were read). A list read is impossible, and a partner's transaction is refused by the
-- functions themselves (platform roles only).
--
-- Values are stored metric and exact: height in cm, weights in hectograms (0.1 kg). Each sync that
-- changes something keeps a version in health_profile_history (the weight chart). A profile's salt
-- makes the digest that the audit event of a sync records unlinkable to values once the profile is
-- erased: values never enter the audit chain. Both tables go with their customer (purge).

CREATE TABLE health_profiles (
    customer_id uuid PRIMARY KEY REFERENCES customers (id) ON DELETE CASCADE,
    version integer NOT NULL,
    synced_at timestamptz NOT NULL,
    salt bytea NOT NULL,
    height_cm smallint NOT NULL CHECK (height_cm BETWEEN 50 AND 250),
    weight_hg integer NOT NULL CHECK (weight_hg BETWEEN 200 AND 4000),
    birth_year smallint NOT NULL CHECK (birth_year BETWEEN 1880 AND 2200),
    sex text NOT NULL CHECK (sex IN ('female', 'male', 'other', 'not_said')),
    weight_goal text NOT NULL CHECK (weight_goal IN ('lose', 'keep', 'gain')),
    target_weight_hg integer CHECK (target_weight_hg BETWEEN 200 AND 4000),
    target_date date,
    daily_calorie_goal integer NOT NULL CHECK (daily_calorie_goal BETWEEN 500 AND 10000),
    activity_level text NOT NULL CHECK (activity_level IN ('sedentary', 'light', 'moderate', 'active', 'very_active'))
);

CREATE TABLE health_profile_history (
    customer_id uuid NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
    version integer NOT NULL,
    synced_at timestamptz NOT NULL,
    height_cm smallint NOT NULL,
    weight_hg integer NOT NULL,
    birth_year smallint NOT NULL,
    sex text NOT NULL,
    weight_goal text NOT NULL,
    target_weight_hg integer,
    target_date date,
    daily_calorie_goal integer NOT NULL,
    activity_level text NOT NULL,
    PRIMARY KEY (customer_id, version)
);

-- The roles that may touch health data at all (deny by default: partners never).
CREATE FUNCTION health_data_allowed() RETURNS boolean
    LANGUAGE sql STABLE
    AS $$ SELECT app_is_platform()
        AND coalesce(current_setting('app.role', true), '') IN ('platform_admin', 'backend_manager', 'auditor', 'app_service') $$;

ALTER TABLE health_profiles ENABLE ROW LEVEL SECURITY;
ALTER TABLE health_profiles FORCE ROW LEVEL SECURITY;
CREATE POLICY health_profiles_platform_roles ON health_profiles USING (health_data_allowed()) WITH CHECK (health_data_allowed());
ALTER TABLE health_profile_history ENABLE ROW LEVEL SECURITY;
ALTER TABLE health_profile_history FORCE ROW LEVEL SECURITY;
CREATE POLICY health_profile_history_platform_roles ON health_profile_history
    USING (health_data_allowed()) WITH CHECK (health_data_allowed());
REVOKE ALL ON health_profiles, health_profile_history FROM backoffice_app;

-- Access events: their own append-only, hash-chained log (not the change log), 16 lanes chosen by
-- customer. An event's canonical text is health_access_fields(...)::text; hash = SHA-256(prev_hash ‖
-- canonical). An export line is the fields from the columns plus id, links and canonical, so
-- `audit verify --offline` verifies it as it verifies the audit log's.
CREATE TABLE health_access_heads (
    chain text PRIMARY KEY,
    seq bigint NOT NULL,
    hash bytea NOT NULL
);
CREATE TABLE health_access_events (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    chain text NOT NULL,
    seq bigint NOT NULL,
    occurred_at timestamptz NOT NULL,
    customer_id uuid NOT NULL,
    actor_id uuid,
    actor_role text NOT NULL,
    purpose text NOT NULL,
    via text NOT NULL CHECK (via IN ('api', 'console', 'export')),
    request_id text NOT NULL,
    token_id uuid,
    session_id uuid,
    canonical bytea NOT NULL,
    prev_hash bytea NOT NULL,
    hash bytea NOT NULL,
    UNIQUE (chain, seq)
);
CREATE INDEX health_access_events_customer ON health_access_events (customer_id, id DESC);
CREATE INDEX health_access_events_time ON health_access_events (occurred_at);

-- The events a read used: one read per event.
CREATE TABLE health_access_reads (
    access_id bigint PRIMARY KEY REFERENCES health_access_events (id)
);
ALTER TABLE health_access_reads ENABLE ROW LEVEL SECURITY;
ALTER TABLE health_access_reads FORCE ROW LEVEL SECURITY;
CREATE POLICY health_access_reads_platform ON health_access_reads
    USING (health_data_allowed()) WITH CHECK (health_data_allowed());
REVOKE ALL ON health_access_reads FROM backoffice_app;

CREATE FUNCTION health_access_refuse_change() RETURNS trigger
    LANGUAGE plpgsql
    AS $$ BEGIN RAISE EXCEPTION 'health_access_events is append-only: % refused', TG_OP USING ERRCODE = 'insufficient_privilege'; END $$;
CREATE TRIGGER health_access_events_no_update BEFORE UPDATE OR DELETE ON health_access_events
    FOR EACH ROW EXECUTE FUNCTION health_access_refuse_change();
CREATE TRIGGER health_access_events_no_truncate BEFORE TRUNCATE ON health_access_events
    FOR EACH STATEMENT EXECUTE FUNCTION health_access_refuse_change();

ALTER TABLE health_access_events ENABLE ROW LEVEL SECURITY;
ALTER TABLE health_access_events FORCE ROW LEVEL SECURITY;
CREATE POLICY health_access_events_platform ON health_access_events
    USING (health_data_allowed()) WITH CHECK (health_data_allowed());
ALTER TABLE health_access_heads ENABLE ROW LEVEL SECURITY;
ALTER TABLE health_access_heads FORCE ROW LEVEL SECURITY;
CREATE POLICY health_access_heads_platform ON health_access_heads
    USING (health_data_allowed()) WITH CHECK (health_data_allowed());
GRANT SELECT ON health_access_events, health_access_heads TO backoffice_app;

-- The hashed fields of an access event, from its columns (the canonical text when appended, the
-- fields of an export line afterwards).
CREATE FUNCTION health_access_fields(
    p_chain text, p_seq bigint, p_at timestamptz, p_customer uuid, p_actor uuid, p_role text, p_purpose text,
    p_via text, p_request_id text, p_token uuid, p_session uuid
) RETURNS jsonb
    LANGUAGE sql IMMUTABLE
    AS $$ SELECT jsonb_build_object('chain', p_chain, 'seq', p_seq,
        'occurred_at', to_char(p_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
        'customer_id', p_customer, 'actor_id', p_actor, 'actor_role', p_role, 'purpose', p_purpose, 'via', p_via,
        'request_id', p_request_id, 'token_id', p_token, 'session_id', p_session) $$;

-- One export line of an event (JSON): the fields from its columns, its id, links and canonical text.
CREATE FUNCTION health_access_line(e health_access_events) RETURNS text
    LANGUAGE sql STABLE
    AS $$ SELECT (health_access_fields(e.chain, e.seq, e.occurred_at, e.customer_id, e.actor_id, e.actor_role, e.purpose,
            e.via, e.request_id, e.token_id, e.session_id)
        || jsonb_build_object('id', e.id, 'prev_hash', encode(e.prev_hash, 'hex'), 'hash', encode(e.hash, 'hex'),
            'canonical', convert_from(e.canonical, 'UTF8')))::text $$;
GRANT EXECUTE ON FUNCTION health_access_line(health_access_events) TO backoffice_app;

-- Records one read of a customer's health data (the first step of a read, committed on its own):
-- picks the lane, links under the head's lock, reads the time there (later in a lane is never
-- earlier in time). An unknown customer raises no_data_found (nothing recorded).
CREATE FUNCTION health_access_append(
    p_customer uuid, p_actor uuid, p_purpose text, p_via text, p_request_id text, p_token uuid, p_session uuid
) RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = public, pg_temp
    AS $$
DECLARE
    v_chain text := 'access:' || lpad((get_byte(sha256(convert_to(p_customer::text, 'UTF8')), 0) % 16)::text, 2, '0');
    v_role text := current_setting('app.role', true);
    v_seq bigint;
    v_prev bytea;
    v_at timestamptz;
    v_canonical bytea;
    v_hash bytea;
    v_id bigint;
BEGIN
    IF NOT health_data_allowed() THEN
        RAISE EXCEPTION 'health data: this transaction''s role may not read it' USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF NOT EXISTS (SELECT FROM customers c WHERE c.id = p_customer) THEN
        RAISE EXCEPTION 'no such customer' USING ERRCODE = 'no_data_found', HINT = 'customer';
    END IF;
    INSERT INTO health_access_heads AS h (chain, seq, hash)
        VALUES (v_chain, 1, '\x0000000000000000000000000000000000000000000000000000000000000000'::bytea)
        ON CONFLICT (chain) DO UPDATE SET seq = h.seq + 1
        RETURNING h.seq, h.hash INTO v_seq, v_prev;
    v_at := clock_timestamp();
    v_canonical := convert_to(health_access_fields(v_chain, v_seq, v_at, p_customer, p_actor, v_role, p_purpose, p_via,
        p_request_id, p_token, p_session)::text, 'UTF8');
    v_hash := sha256(v_prev || v_canonical);
    UPDATE health_access_heads SET hash = v_hash WHERE chain = v_chain;
    INSERT INTO health_access_events (chain, seq, occurred_at, customer_id, actor_id, actor_role, purpose, via, request_id,
        token_id, session_id, canonical, prev_hash, hash)
        VALUES (v_chain, v_seq, v_at, p_customer, p_actor, v_role, p_purpose, p_via, p_request_id, p_token, p_session,
        v_canonical, v_prev, v_hash)
        RETURNING id INTO v_id;
    RETURN v_id;
END
$$;
REVOKE ALL ON FUNCTION health_access_append(uuid, uuid, text, text, text, uuid, uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION health_access_append(uuid, uuid, text, text, text, uuid, uuid) TO backoffice_app;

-- The one way to read health data (the second step): the profile of the customer an access event
-- names and its latest p_history versions (oldest first, JSON objects in the contract's units), for
-- an event that a transaction before this one committed (not this transaction's, which a rollback
-- could take back), of this role, less than a minute old and not read with before. No profile: no row.
CREATE FUNCTION health_profile_read(p_access bigint, p_history integer) RETURNS TABLE (
    version integer, synced_at timestamptz, height_cm smallint, weight_hg integer, birth_year smallint, sex text,
    weight_goal text, target_weight_hg integer, target_date date, daily_calorie_goal integer, activity_level text,
    history text, access_id bigint
)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = public, pg_temp
    AS $$
DECLARE
    v_customer uuid;
    v_mine xid8 := pg_current_xact_id_if_assigned();
BEGIN
    IF NOT health_data_allowed() THEN
        RAISE EXCEPTION 'health data: this transaction''s role may not read it' USING ERRCODE = 'insufficient_privilege';
    END IF;
    SELECT e.customer_id INTO v_customer FROM health_access_events e
        WHERE e.id = p_access AND e.actor_role = current_setting('app.role', true)
          AND e.occurred_at > clock_timestamp() - interval '1 minute'
          AND (v_mine IS NULL OR e.xmin::text <> (v_mine::text::numeric % 4294967296)::text);
    IF v_customer IS NULL THEN
        RAISE EXCEPTION 'health_profile_read needs a fresh access event committed before this read'
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    INSERT INTO health_access_reads (access_id) VALUES (p_access);  -- a second read of one event: unique_violation
    RETURN QUERY
        SELECT p.version, p.synced_at, p.height_cm, p.weight_hg, p.birth_year, p.sex, p.weight_goal, p.target_weight_hg,
            p.target_date, p.daily_calorie_goal, p.activity_level,
            (SELECT coalesce(jsonb_agg(jsonb_build_object('version', h.version,
                    'synced_at', to_char(h.synced_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
                    'height_cm', h.height_cm, 'weight_kg', round(h.weight_hg / 10.0, 1), 'birth_year', h.birth_year,
                    'sex', h.sex, 'weight_goal', h.weight_goal, 'target_weight_kg', round(h.target_weight_hg / 10.0, 1),
                    'target_date', h.target_date, 'daily_calorie_goal', h.daily_calorie_goal,
                    'activity_level', h.activity_level) ORDER BY h.version), '[]'::jsonb)::text
                FROM (SELECT * FROM health_profile_history h WHERE h.customer_id = v_customer
                      ORDER BY h.version DESC LIMIT greatest(p_history, 0)) h),
            p_access
        FROM health_profiles p WHERE p.customer_id = v_customer;
END
$$;
REVOKE ALL ON FUNCTION health_profile_read(bigint, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION health_profile_read(bigint, integer) TO backoffice_app;

-- The app's sync: stores the values when they differ from the current ones (a new version, kept in
-- the history) and answers the version, the salted digest of the values and the names of the fields
-- that changed (empty: unchanged). An unknown customer raises no_data_found.
CREATE FUNCTION health_profile_sync(
    p_customer uuid, p_at timestamptz, p_height smallint, p_weight_hg integer, p_birth_year smallint, p_sex text,
    p_goal text, p_target_hg integer, p_target_date date, p_calories integer, p_activity text
) RETURNS TABLE (version integer, digest text, changed text[])
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = public, pg_temp
    AS $$
DECLARE
    v_old health_profiles;
    v_new health_profiles;
    v_changed text[] := '{}';
BEGIN
    IF NOT (app_is_platform() AND coalesce(current_setting('app.role', true), '') IN ('app_service', 'platform_admin')) THEN
        RAISE EXCEPTION 'health data: only the app''s backend writes it' USING ERRCODE = 'insufficient_privilege';
    END IF;
    PERFORM FROM customers c WHERE c.id = p_customer AND c.status <> 'deleted' FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'no such customer' USING ERRCODE = 'no_data_found', HINT = 'customer';
    END IF;
    SELECT * INTO v_old FROM health_profiles p WHERE p.customer_id = p_customer;
    v_new := ROW(p_customer, coalesce(v_old.version, 0) + 1, p_at, coalesce(v_old.salt, uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid())),
        p_height, p_weight_hg, p_birth_year, p_sex, p_goal, p_target_hg, p_target_date, p_calories, p_activity);
    IF v_old.customer_id IS NULL THEN
        v_changed := ARRAY['height_cm', 'weight_kg', 'birth_year', 'sex', 'weight_goal', 'target_weight_kg', 'target_date',
            'daily_calorie_goal', 'activity_level'];
    ELSE
        IF v_old.height_cm IS DISTINCT FROM p_height THEN v_changed := v_changed || 'height_cm'::text; END IF;
        IF v_old.weight_hg IS DISTINCT FROM p_weight_hg THEN v_changed := v_changed || 'weight_kg'::text; END IF;
        IF v_old.birth_year IS DISTINCT FROM p_birth_year THEN v_changed := v_changed || 'birth_year'::text; END IF;
        IF v_old.sex IS DISTINCT FROM p_sex THEN v_changed := v_changed || 'sex'::text; END IF;
        IF v_old.weight_goal IS DISTINCT FROM p_goal THEN v_changed := v_changed || 'weight_goal'::text; END IF;
        IF v_old.target_weight_hg IS DISTINCT FROM p_target_hg THEN v_changed := v_changed || 'target_weight_kg'::text; END IF;
        IF v_old.target_date IS DISTINCT FROM p_target_date THEN v_changed := v_changed || 'target_date'::text; END IF;
        IF v_old.daily_calorie_goal IS DISTINCT FROM p_calories THEN v_changed := v_changed || 'daily_calorie_goal'::text; END IF;
        IF v_old.activity_level IS DISTINCT FROM p_activity THEN v_changed := v_changed || 'activity_level'::text; END IF;
    END IF;
    IF cardinality(v_changed) = 0 THEN
        v_new := v_old;
    ELSE
        INSERT INTO health_profiles VALUES (v_new.*)
            ON CONFLICT (customer_id) DO UPDATE SET version = EXCLUDED.version, synced_at = EXCLUDED.synced_at,
                height_cm = EXCLUDED.height_cm, weight_hg = EXCLUDED.weight_hg, birth_year = EXCLUDED.birth_year,
                sex = EXCLUDED.sex, weight_goal = EXCLUDED.weight_goal, target_weight_hg = EXCLUDED.target_weight_hg,
                target_date = EXCLUDED.target_date, daily_calorie_goal = EXCLUDED.daily_calorie_goal,
                activity_level = EXCLUDED.activity_level;
        INSERT INTO health_profile_history VALUES (p_customer, v_new.version, p_at, p_height, p_weight_hg, p_birth_year,
            p_sex, p_goal, p_target_hg, p_target_date, p_calories, p_activity);
    END IF;
    RETURN QUERY SELECT v_new.version,
        encode(sha256(v_new.salt || convert_to(ROW(v_new.height_cm, v_new.weight_hg, v_new.birth_year, v_new.sex,
            v_new.weight_goal, v_new.target_weight_hg, v_new.target_date, v_new.daily_calorie_goal,
            v_new.activity_level)::text, 'UTF8')), 'hex'),
        v_changed;
END
$$;
REVOKE ALL ON FUNCTION health_profile_sync(uuid, timestamptz, smallint, integer, smallint, text, text, integer, date, integer, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION health_profile_sync(uuid, timestamptz, smallint, integer, smallint, text, text, integer, date, integer, text) TO backoffice_app;

-- The purpose a console session stated for reading a customer's health data: asked once per session
-- and customer, then every read of that session records it (one access event per read). Goes with
-- the session.
CREATE TABLE console_read_purposes (
    session_id uuid NOT NULL REFERENCES console_sessions (id) ON DELETE CASCADE,
    customer_id uuid NOT NULL,
    purpose text NOT NULL CHECK (length(purpose) BETWEEN 1 AND 40),
    stated_at timestamptz NOT NULL,
    PRIMARY KEY (session_id, customer_id)
);
ALTER TABLE console_read_purposes ENABLE ROW LEVEL SECURITY;
ALTER TABLE console_read_purposes FORCE ROW LEVEL SECURITY;
CREATE POLICY console_read_purposes_platform ON console_read_purposes
    USING (health_data_allowed()) WITH CHECK (health_data_allowed());
GRANT SELECT, INSERT, UPDATE ON console_read_purposes TO backoffice_app;

-- The purge's erasure of a deleted customer's orders: the shipping name and address go, what tax law
-- needs (amounts, dates, lines) stays. The service role may update only an order's state columns;
-- this erases these two only for customers deleted before p_deleted_before (the retention period's
-- cut, past which they can no longer be restored), and only for a platform manager or admin.
CREATE FUNCTION erase_deleted_customers_shipping(p_customers uuid[], p_deleted_before timestamptz) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = public, pg_temp
    AS $$
DECLARE
    v_erased integer;
BEGIN
    IF NOT (app_is_platform() AND coalesce(current_setting('app.role', true), '') IN ('backend_manager', 'platform_admin')) THEN
        RAISE EXCEPTION 'erasing shipping details is a platform manager''s' USING ERRCODE = 'insufficient_privilege';
    END IF;
    UPDATE orders o SET shipping_name = 'erased', shipping_address = '{}'::jsonb
        WHERE o.customer_id = ANY(p_customers)
          AND EXISTS (SELECT FROM customers c WHERE c.id = o.customer_id AND c.status = 'deleted'
                      AND c.deleted_at < p_deleted_before);
    GET DIAGNOSTICS v_erased = ROW_COUNT;
    RETURN v_erased;
END
$$;
REVOKE ALL ON FUNCTION erase_deleted_customers_shipping(uuid[], timestamptz) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION erase_deleted_customers_shipping(uuid[], timestamptz) TO backoffice_app;

-- The customer's data export reads the customer's activity page by page, in time order.
CREATE INDEX activity_events_customer_time ON activity_events (customer_id, occurred_at, event_id);
