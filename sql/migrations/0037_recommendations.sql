-- Recommendations: exercise and nutrition advice backend managers publish for the app, each to
-- the customers its audience rule selects. The rule's parts are columns (each optional, combined
-- with AND), so one statement matches a customer against every recommendation at once; today a
-- rule selects by subscription state (health-profile parts join when profiles are stored).
-- Platform content: only platform sessions see it.
CREATE TABLE recommendations (
    id uuid PRIMARY KEY,
    kind text NOT NULL CHECK (kind IN ('exercise', 'nutrition')),
    title text NOT NULL CHECK (length(title) BETWEEN 1 AND 200),
    body text NOT NULL CHECK (length(body) BETWEEN 1 AND 20000),
    html text NOT NULL,
    -- The audience: subscription states (empty: any).
    subscriptions text[] NOT NULL DEFAULT '{}'
        CHECK (subscriptions <@ ARRAY['none', 'active', 'lapsed']::text[]),
    valid_from timestamptz,
    valid_until timestamptz CHECK (valid_until IS NULL OR valid_from IS NULL OR valid_until > valid_from),
    status text NOT NULL DEFAULT 'draft' CHECK (status IN ('draft', 'published', 'retracted')),
    published_at timestamptz,
    retracted_at timestamptz,
    retract_reason text CHECK (length(retract_reason) BETWEEN 1 AND 1000),
    created_by uuid NOT NULL,
    created_at timestamptz NOT NULL,
    updated_by uuid NOT NULL,
    updated_at timestamptz NOT NULL,
    version bigint NOT NULL DEFAULT 1,
    CHECK ((status = 'draft') = (published_at IS NULL)),
    CHECK ((status = 'retracted') = (retracted_at IS NOT NULL))
);

-- The app's read: the published ones, newest first.
CREATE INDEX recommendations_published ON recommendations (published_at DESC, id DESC) WHERE status = 'published';
CREATE INDEX recommendations_by_change ON recommendations (updated_at DESC, id DESC);

ALTER TABLE recommendations ENABLE ROW LEVEL SECURITY;
ALTER TABLE recommendations FORCE ROW LEVEL SECURITY;
CREATE POLICY recommendations_platform_only ON recommendations
    USING (app_is_platform()) WITH CHECK (app_is_platform());
GRANT SELECT, INSERT, UPDATE ON recommendations TO backoffice_app;
