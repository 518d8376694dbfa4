-- Workout videos: the metadata of videos led by the company's trainers (the bytes are on its CDN),
-- reviewed as articles are, each version with its MET value (the Compendium of Physical
-- Activities' intensity), from which the app's estimate of a customer's calories is computed
-- inside the database from their latest weight. Premium videos play only for a subscriber.
CREATE TABLE videos (
    id uuid PRIMARY KEY,
    author_id uuid NOT NULL REFERENCES operators (id),
    state text NOT NULL CHECK (state IN ('draft', 'in_review', 'published', 'archived')),
    version integer NOT NULL CHECK (version >= 1),
    live_version integer CHECK (live_version BETWEEN 1 AND version),
    review_comment text CHECK (length(review_comment) BETWEEN 1 AND 2000),
    reviewed_by uuid,
    reviewed_at timestamptz,
    submitted_at timestamptz,
    first_published_at timestamptz,
    live_at timestamptz,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    updated_by uuid NOT NULL,
    CHECK (state <> 'published' OR live_version = version),
    CHECK ((live_version IS NULL) = (first_published_at IS NULL))
);

CREATE TABLE video_versions (
    video_id uuid NOT NULL REFERENCES videos (id),
    version integer NOT NULL CHECK (version >= 1),
    title text NOT NULL CHECK (length(title) BETWEEN 1 AND 200),
    description text NOT NULL CHECK (length(description) BETWEEN 1 AND 2000),
    category text NOT NULL CHECK (category ~ '^[a-z0-9][a-z0-9-]{1,39}$'),
    trainer_id uuid NOT NULL REFERENCES operators (id),
    trainer_name text NOT NULL CHECK (length(trainer_name) BETWEEN 1 AND 120),
    duration_seconds integer NOT NULL CHECK (duration_seconds BETWEEN 60 AND 14400),
    level text NOT NULL CHECK (level IN ('beginner', 'intermediate', 'advanced')),
    equipment text[] NOT NULL DEFAULT '{}',
    video_url text NOT NULL CHECK (video_url ~ '^https://'),
    cover_url text CHECK (cover_url ~ '^https://'),
    met double precision NOT NULL CHECK (met BETWEEN 1 AND 25),
    premium boolean NOT NULL,
    written_by uuid NOT NULL,
    written_at timestamptz NOT NULL,
    PRIMARY KEY (video_id, version)
);

-- The app's list: live videos, newest first publication first.
CREATE INDEX videos_live ON videos (first_published_at DESC, id DESC)
    WHERE live_version IS NOT NULL AND state <> 'archived';
CREATE INDEX videos_by_change ON videos (updated_at DESC, id DESC);
CREATE INDEX videos_in_review ON videos (submitted_at, id) WHERE state = 'in_review';
CREATE INDEX videos_by_author ON videos (author_id, updated_at DESC);

ALTER TABLE videos ENABLE ROW LEVEL SECURITY;
ALTER TABLE videos FORCE ROW LEVEL SECURITY;
CREATE POLICY videos_platform_only ON videos USING (app_is_platform()) WITH CHECK (app_is_platform());
GRANT SELECT, INSERT, UPDATE ON videos TO backoffice_app;

ALTER TABLE video_versions ENABLE ROW LEVEL SECURITY;
ALTER TABLE video_versions FORCE ROW LEVEL SECURITY;
CREATE POLICY video_versions_platform_only ON video_versions USING (app_is_platform()) WITH CHECK (app_is_platform());
-- Versions are only ever added.
GRANT SELECT, INSERT ON video_versions TO backoffice_app;

-- A customer's own calorie estimate for a live video: MET × their latest weight × hours, to 10 kcal,
-- with the version of the profile it came from (for the app's cache). The one way the service
-- reaches a weight without a person's recorded read: only for the app's backend (its customer's
-- own figure for their own screen), and only through a real video's MET and length, so the answer
-- is an estimate, never the weight. No profile, or a video not live: no row.
CREATE FUNCTION video_kilocalories(p_customer uuid, p_video uuid)
    RETURNS TABLE (kilocalories integer, profile_version integer)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
    AS $$
BEGIN
    IF NOT (app_is_platform() AND coalesce(current_setting('app.role', true), '') IN ('app_service', 'platform_admin')) THEN
        RAISE EXCEPTION 'video_kilocalories: only the app''s backend reads a customer''s estimate'
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    RETURN QUERY
        SELECT (round((v.met * p.weight_hg / 10.0 * v.duration_seconds / 3600.0 / 10)::numeric) * 10)::integer,
            p.version
        FROM health_profiles p
        JOIN videos w ON w.id = p_video AND w.live_version IS NOT NULL AND w.state <> 'archived'
        JOIN video_versions v ON v.video_id = w.id AND v.version = w.live_version
        WHERE p.customer_id = p_customer;
END
$$;
REVOKE ALL ON FUNCTION video_kilocalories(uuid, uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION video_kilocalories(uuid, uuid) TO backoffice_app;
