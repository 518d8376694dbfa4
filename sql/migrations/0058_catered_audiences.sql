-- Content catered to the customer: a recommendation's audience rule gains parts drawn from the
-- customer's health profile (age band, sex, weight goal, activity level), each optional (empty:
-- any), combined with the subscription part by AND. A rule with a health part selects only customers
-- with a profile whose values match.
--
-- The values never leave the database for this: the app's feed asks health_audience_match (one
-- customer, a yes or no for their own feed), the managers' dry run asks health_audience_count (a
-- count, which the service withholds under 10). Neither is a person's read of one customer's
-- values, so neither records an access event.
ALTER TABLE recommendations
    ADD COLUMN age_bands text[] NOT NULL DEFAULT '{}'
        CHECK (age_bands <@ ARRAY['under_18', '18_29', '30_44', '45_59', '60_plus']::text[]),
    ADD COLUMN sexes text[] NOT NULL DEFAULT '{}'
        CHECK (sexes <@ ARRAY['female', 'male', 'other', 'not_said']::text[]),
    ADD COLUMN weight_goals text[] NOT NULL DEFAULT '{}'
        CHECK (weight_goals <@ ARRAY['lose', 'keep', 'gain']::text[]),
    ADD COLUMN activity_levels text[] NOT NULL DEFAULT '{}'
        CHECK (activity_levels <@ ARRAY['sedentary', 'light', 'moderate', 'active', 'very_active']::text[]);

-- The band of an age in years (as the service's AgeBand).
CREATE FUNCTION age_band(p_age integer) RETURNS text
    LANGUAGE sql IMMUTABLE
    AS $$ SELECT CASE WHEN p_age < 18 THEN 'under_18' WHEN p_age < 30 THEN '18_29' WHEN p_age < 45 THEN '30_44'
        WHEN p_age < 60 THEN '45_59' ELSE '60_plus' END $$;

-- Whether a profile's values fall in a rule's health parts (an empty part: any) at p_at (the age is
-- the year of p_at less the birth year, as the service counts it).
CREATE FUNCTION health_audience_fits(p health_profiles, p_at timestamptz, p_bands text[], p_sexes text[],
    p_goals text[], p_levels text[]) RETURNS boolean
    LANGUAGE sql STABLE
    AS $$ SELECT (cardinality(p_bands) = 0
            OR age_band(extract(year FROM p_at AT TIME ZONE 'UTC')::integer - p.birth_year) = ANY(p_bands))
        AND (cardinality(p_sexes) = 0 OR p.sex = ANY(p_sexes))
        AND (cardinality(p_goals) = 0 OR p.weight_goal = ANY(p_goals))
        AND (cardinality(p_levels) = 0 OR p.activity_level = ANY(p_levels)) $$;

-- Whether a rule's health parts select one customer (true when the rule has none): for the app's
-- backend, reading that customer's own feed.
CREATE FUNCTION health_audience_match(p_customer uuid, p_at timestamptz, p_bands text[], p_sexes text[],
    p_goals text[], p_levels text[]) RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
    AS $$
BEGIN
    IF cardinality(p_bands) + cardinality(p_sexes) + cardinality(p_goals) + cardinality(p_levels) = 0 THEN
        RETURN true;
    END IF;
    IF NOT (app_is_platform() AND coalesce(current_setting('app.role', true), '') IN ('app_service', 'platform_admin')) THEN
        RAISE EXCEPTION 'health_audience_match: only the app''s backend matches a customer''s feed'
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    RETURN EXISTS (SELECT FROM health_profiles p WHERE p.customer_id = p_customer
        AND health_audience_fits(p, p_at, p_bands, p_sexes, p_goals, p_levels));
END
$$;
REVOKE ALL ON FUNCTION health_audience_match(uuid, timestamptz, text[], text[], text[], text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION health_audience_match(uuid, timestamptz, text[], text[], text[], text[]) TO backoffice_app;

-- How many active customers a rule selects (its subscription part and its health parts): for the
-- managers' dry run, a count only.
CREATE FUNCTION health_audience_count(p_states text[], p_at timestamptz, p_bands text[], p_sexes text[],
    p_goals text[], p_levels text[]) RETURNS bigint
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
    AS $$
BEGIN
    IF NOT (app_is_platform()
            AND coalesce(current_setting('app.role', true), '') IN ('platform_admin', 'backend_manager', 'auditor')) THEN
        RAISE EXCEPTION 'health_audience_count: a dry run is a manager''s' USING ERRCODE = 'insufficient_privilege';
    END IF;
    RETURN (SELECT count(*) FROM customers c JOIN health_profiles p ON p.customer_id = c.id
        WHERE c.status = 'active' AND (cardinality(p_states) = 0 OR c.subscription = ANY(p_states))
          AND health_audience_fits(p, p_at, p_bands, p_sexes, p_goals, p_levels));
END
$$;
REVOKE ALL ON FUNCTION health_audience_count(text[], timestamptz, text[], text[], text[], text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION health_audience_count(text[], timestamptz, text[], text[], text[], text[]) TO backoffice_app;
