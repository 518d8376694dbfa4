-- Plans made for one customer: the app files a request for a meal plan or an exercise plan (with the
-- goal the customer set for it); the request waits in the experts' queue for its kind, oldest first;
-- an expert takes it (held for a while, as a moderator takes a case), may read the customer's health
-- profile with the purpose `plan` (recorded, as every read), writes the plan (versions kept) and sends
-- it; the app reads the sent version. The customer may ask for one change to a sent plan: a new
-- request linked to the plan, answered by a new version of it.
--
-- Who sees what is held by row-level security, with the operator the transaction acts for
-- (`app.operator_id`, set with the tenant and role): an expert sees the requests waiting in the queue
-- and those it holds, and the plans it wrote or holds a change request of; the other platform roles
-- see all; a partner nothing.

-- The operator the transaction acts for (NULL for the system and a failed authentication).
CREATE FUNCTION app_operator() RETURNS uuid
    LANGUAGE sql STABLE
    AS $$ SELECT nullif(current_setting('app.operator_id', true), '')::uuid $$;

-- Whether the transaction acts for an expert (whose view of plans is narrowed to its own).
CREATE FUNCTION app_is_expert() RETURNS boolean
    LANGUAGE sql STABLE
    AS $$ SELECT coalesce(current_setting('app.role', true), '') = 'expert' $$;

CREATE TABLE plans (
    id uuid PRIMARY KEY,
    customer_id uuid NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
    kind text NOT NULL CHECK (kind IN ('meal', 'exercise')),
    author_id uuid NOT NULL REFERENCES operators (id),
    version integer NOT NULL CHECK (version >= 1),
    sent_version integer CHECK (sent_version BETWEEN 1 AND version),
    sent_at timestamptz,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    updated_by uuid NOT NULL,
    CHECK ((sent_version IS NULL) = (sent_at IS NULL))
);
CREATE INDEX plans_by_customer ON plans (customer_id, created_at DESC, id DESC);
CREATE INDEX plans_by_author ON plans (author_id, updated_at DESC, id DESC);
CREATE INDEX plans_by_change ON plans (updated_at DESC, id DESC);

-- Each version as written: the note to the customer and the schedule (days × meals or weeks ×
-- sessions, JSON, each item resolved when saved: a recipe's title and calories, a video's title).
CREATE TABLE plan_versions (
    plan_id uuid NOT NULL REFERENCES plans (id) ON DELETE CASCADE,
    version integer NOT NULL CHECK (version >= 1),
    note text NOT NULL CHECK (length(note) BETWEEN 1 AND 4000),
    schedule jsonb NOT NULL,
    -- the calorie goal a day of the request the version answered (a meal plan's days are checked against it)
    calorie_goal integer CHECK (calorie_goal BETWEEN 500 AND 10000),
    written_by uuid NOT NULL,
    written_at timestamptz NOT NULL,
    PRIMARY KEY (plan_id, version)
);

CREATE TABLE plan_requests (
    id uuid PRIMARY KEY,
    customer_id uuid NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
    kind text NOT NULL CHECK (kind IN ('meal', 'exercise')),
    -- what the customer asked for, in their words, and the calorie goal a day they set for the plan
    goal text NOT NULL CHECK (length(goal) BETWEEN 1 AND 1000),
    daily_calorie_goal integer CHECK (daily_calorie_goal BETWEEN 500 AND 10000),
    -- a change asked of a sent plan (at most one per plan)
    change_of uuid UNIQUE REFERENCES plans (id) ON DELETE CASCADE,
    status text NOT NULL CHECK (status IN ('waiting', 'answered')),
    held_by uuid REFERENCES operators (id),
    held_until timestamptz,
    plan_id uuid REFERENCES plans (id) ON DELETE SET NULL,
    filed_at timestamptz NOT NULL,
    answered_at timestamptz,
    version integer NOT NULL DEFAULT 1,
    CHECK ((held_by IS NULL) = (held_until IS NULL)),
    CHECK ((status = 'answered') = (answered_at IS NOT NULL))
);
-- The queue of each kind, oldest first.
CREATE INDEX plan_requests_queue ON plan_requests (kind, filed_at, id) WHERE status = 'waiting';
CREATE INDEX plan_requests_by_customer ON plan_requests (customer_id, filed_at DESC);
CREATE INDEX plan_requests_by_holder ON plan_requests (held_by) WHERE status = 'waiting';
-- One first request of each kind waiting per customer (a change request is one per plan).
CREATE UNIQUE INDEX plan_requests_one_waiting ON plan_requests (customer_id, kind)
    WHERE status = 'waiting' AND change_of IS NULL;

-- Whether the transaction's operator holds a waiting request of `p_customer` now (the condition under
-- which an expert reads that customer's profile, and writes a plan for them).
CREATE FUNCTION plan_request_held(p_customer uuid) RETURNS boolean
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
    AS $$ SELECT EXISTS (SELECT FROM plan_requests r
        WHERE r.customer_id = p_customer AND r.status = 'waiting' AND r.held_by = app_operator()
          AND r.held_until > now()) $$;
REVOKE ALL ON FUNCTION plan_request_held(uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION plan_request_held(uuid) TO backoffice_app;

-- The plans whose change request the transaction's operator holds now.
CREATE FUNCTION plan_changes_held() RETURNS SETOF uuid
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
    AS $$ SELECT r.change_of FROM plan_requests r
        WHERE r.change_of IS NOT NULL AND r.status = 'waiting' AND r.held_by = app_operator()
          AND r.held_until > now() $$;
REVOKE ALL ON FUNCTION plan_changes_held() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION plan_changes_held() TO backoffice_app;

ALTER TABLE plan_requests ENABLE ROW LEVEL SECURITY;
ALTER TABLE plan_requests FORCE ROW LEVEL SECURITY;
CREATE POLICY plan_requests_visible ON plan_requests
    USING (app_is_platform() AND (NOT app_is_expert() OR held_by = app_operator()
        OR (status = 'waiting' AND (held_until IS NULL OR held_until <= now()))))
    WITH CHECK (app_is_platform() AND (NOT app_is_expert() OR held_by = app_operator()));
GRANT SELECT, INSERT, UPDATE ON plan_requests TO backoffice_app;

ALTER TABLE plans ENABLE ROW LEVEL SECURITY;
ALTER TABLE plans FORCE ROW LEVEL SECURITY;
CREATE POLICY plans_visible ON plans
    USING (app_is_platform() AND (NOT app_is_expert() OR author_id = app_operator()
        OR id IN (SELECT plan_changes_held())))
    WITH CHECK (app_is_platform() AND (NOT app_is_expert() OR author_id = app_operator()
        OR id IN (SELECT plan_changes_held())));
GRANT SELECT, INSERT, UPDATE ON plans TO backoffice_app;

ALTER TABLE plan_versions ENABLE ROW LEVEL SECURITY;
ALTER TABLE plan_versions FORCE ROW LEVEL SECURITY;
CREATE POLICY plan_versions_visible ON plan_versions
    USING (EXISTS (SELECT FROM plans p WHERE p.id = plan_id))
    WITH CHECK (EXISTS (SELECT FROM plans p WHERE p.id = plan_id));
-- Versions are only ever added.
GRANT SELECT, INSERT ON plan_versions TO backoffice_app;

-- Health data for a plan: an expert may record a read of a customer's profile with the purpose `plan`,
-- and only while it holds a waiting request of that customer; the platform roles as before.
CREATE FUNCTION health_read_allowed(p_customer uuid, p_purpose text) RETURNS boolean
    LANGUAGE sql STABLE
    SET search_path = public, pg_temp
    AS $$ SELECT health_data_allowed()
        OR (app_is_platform() AND app_is_expert() AND p_purpose = 'plan' AND plan_request_held(p_customer)) $$;

CREATE OR REPLACE FUNCTION health_access_append(
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
    -- an expert reads only as itself, with the purpose plan, for the customer of a request it holds
    IF app_is_expert()
            AND (p_actor IS DISTINCT FROM app_operator() OR NOT health_read_allowed(p_customer, p_purpose)) THEN
        RAISE EXCEPTION 'health data: not for this expert now' USING ERRCODE = 'insufficient_privilege',
            HINT = 'An expert reads a customer''s health profile only with the purpose plan, while it holds a plan '
                || 'request of that customer (take the request first).';
    END IF;
    IF NOT health_read_allowed(p_customer, p_purpose) THEN
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

-- As in 0038, and for an expert: only its own event with the purpose `plan`, while it still holds
-- a request of the customer.
CREATE OR REPLACE FUNCTION health_profile_read(p_access bigint, p_history integer) RETURNS TABLE (
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
    IF NOT (health_data_allowed() OR (app_is_platform() AND app_is_expert())) THEN
        RAISE EXCEPTION 'health data: this transaction''s role may not read it' USING ERRCODE = 'insufficient_privilege';
    END IF;
    SELECT e.customer_id INTO v_customer FROM health_access_events e
        WHERE e.id = p_access AND e.actor_role = current_setting('app.role', true)
          AND e.occurred_at > clock_timestamp() - interval '1 minute'
          AND (v_mine IS NULL OR e.xmin::text <> (v_mine::text::numeric % 4294967296)::text)
          AND (health_data_allowed()
               OR (e.purpose = 'plan' AND e.actor_id = app_operator() AND plan_request_held(e.customer_id)));
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
