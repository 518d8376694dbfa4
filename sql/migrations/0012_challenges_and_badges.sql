-- Badges and challenges.
--
-- A badge is defined by managers (optionally with a rule that awards it: one event of a metric
-- reaching a threshold) and held at most once per customer. A challenge ranks customers by an
-- aggregation of one metric over a window; scores are kept incrementally as activity arrives
-- (challenge_scores), so a leaderboard never aggregates raw events. Its budget is a FitPoints
-- account funded at publication; settlement pays from it and cannot overdraw it.

CREATE TABLE badges (
    slug text PRIMARY KEY CHECK (slug ~ '^[a-z0-9][a-z0-9-]{1,62}$'),
    name text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
    description text NOT NULL DEFAULT '' CHECK (length(description) <= 1000),
    metric text CHECK (metric IN ('calories_burned', 'workout_minutes', 'distance_m', 'steps', 'lift')),
    threshold double precision CHECK (threshold > 0 AND threshold < 'Infinity'),
    created_by uuid,
    created_at timestamptz NOT NULL DEFAULT now(),
    CHECK ((metric IS NULL) = (threshold IS NULL))
);

CREATE TABLE badge_awards (
    customer_id uuid NOT NULL,
    badge text NOT NULL REFERENCES badges (slug),
    source text NOT NULL CHECK (length(source) <= 200),
    awarded_at timestamptz NOT NULL,
    PRIMARY KEY (customer_id, badge)
);

CREATE TABLE challenges (
    id uuid PRIMARY KEY,
    name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    description text NOT NULL DEFAULT '' CHECK (length(description) <= 5000),
    metric text NOT NULL CHECK (metric IN ('calories_burned', 'workout_minutes', 'distance_m', 'steps', 'lift')),
    aggregation text NOT NULL CHECK (aggregation IN ('sum', 'max', 'count')),
    starts_at timestamptz NOT NULL,
    ends_at timestamptz NOT NULL,
    grace_seconds bigint NOT NULL CHECK (grace_seconds BETWEEN 0 AND 2592000),
    grace_period text NOT NULL,
    eligibility text NOT NULL CHECK (eligibility IN ('all', 'subscribers')),
    target double precision CHECK (target > 0 AND target < 'Infinity'),
    tie_policy text NOT NULL CHECK (tie_policy IN ('standard', 'dense', 'earliest')),
    rewards jsonb NOT NULL,
    budget_points bigint NOT NULL CHECK (budget_points BETWEEN 0 AND 1000000000),
    status text NOT NULL DEFAULT 'draft' CHECK (status IN ('draft', 'published', 'settled')),
    published_at timestamptz,
    settled_at timestamptz,
    settlement jsonb,
    created_by uuid,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    version bigint NOT NULL DEFAULT 1,
    CHECK (ends_at > starts_at)
);
CREATE INDEX challenges_created ON challenges (created_at, id);
-- Ingestion's lookup: published challenges of a metric whose board is still open.
CREATE INDEX challenges_open ON challenges (metric, ends_at) WHERE status = 'published';

CREATE TABLE challenge_scores (
    challenge_id uuid NOT NULL REFERENCES challenges (id),
    customer_id uuid NOT NULL,
    score double precision NOT NULL,
    events integer NOT NULL,
    -- When the score was reached, by activity time (the `earliest` tie policy ranks by it).
    achieved_at timestamptz NOT NULL,
    PRIMARY KEY (challenge_id, customer_id)
);
CREATE INDEX challenge_scores_board ON challenge_scores (challenge_id, score DESC, achieved_at, customer_id);

ALTER TABLE badges ENABLE ROW LEVEL SECURITY;
ALTER TABLE badges FORCE ROW LEVEL SECURITY;
CREATE POLICY badges_platform_only ON badges USING (app_is_platform()) WITH CHECK (app_is_platform());
ALTER TABLE badge_awards ENABLE ROW LEVEL SECURITY;
ALTER TABLE badge_awards FORCE ROW LEVEL SECURITY;
CREATE POLICY badge_awards_platform_only ON badge_awards USING (app_is_platform()) WITH CHECK (app_is_platform());
ALTER TABLE challenges ENABLE ROW LEVEL SECURITY;
ALTER TABLE challenges FORCE ROW LEVEL SECURITY;
CREATE POLICY challenges_platform_only ON challenges USING (app_is_platform()) WITH CHECK (app_is_platform());
ALTER TABLE challenge_scores ENABLE ROW LEVEL SECURITY;
ALTER TABLE challenge_scores FORCE ROW LEVEL SECURITY;
CREATE POLICY challenge_scores_platform_only ON challenge_scores USING (app_is_platform()) WITH CHECK (app_is_platform());
GRANT SELECT, INSERT ON badges TO backoffice_app;
GRANT SELECT, INSERT ON badge_awards TO backoffice_app;
GRANT SELECT, INSERT, UPDATE ON challenges TO backoffice_app;
GRANT SELECT, INSERT, UPDATE ON challenge_scores TO backoffice_app;
