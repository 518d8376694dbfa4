-- Activity the app reports, and the earning rules that turn it into FitPoints.
--
-- An activity event is stored once: its event_id is its identity, and a repeated id changes
-- nothing (INSERT … ON CONFLICT DO NOTHING, in the transaction that pays its points, so points are
-- paid exactly once). Values are double precision, as sent. `score` is what a challenge ranks
-- (the value, or for a lift the lifter's strength points); `intensity` is a workout's MET class.
CREATE TABLE activity_events (
    event_id text PRIMARY KEY CHECK (length(event_id) BETWEEN 1 AND 200),
    customer_id uuid NOT NULL,
    metric text NOT NULL CHECK (metric IN ('calories_burned', 'workout_minutes', 'distance_m', 'steps', 'lift')),
    value double precision NOT NULL CHECK (value >= 0 AND value < 'Infinity'),
    score double precision NOT NULL CHECK (score >= 0 AND score < 'Infinity'),
    intensity text CHECK (intensity IN ('light', 'moderate', 'vigorous')),
    occurred_at timestamptz NOT NULL,
    details jsonb,
    batch_id uuid NOT NULL,
    received_at timestamptz NOT NULL
);

-- Earning rules, versioned: the current rules are the highest version. Never changed or removed.
CREATE TABLE fitpoints_rule_sets (
    version integer PRIMARY KEY CHECK (version >= 1),
    rules jsonb NOT NULL,
    created_by uuid,
    created_at timestamptz NOT NULL DEFAULT now()
);

-- What each customer has earned per rule and UTC day, for the daily caps: the units counted and
-- the points paid. Points due = min(cap, floor(units × rate)) − points already paid, so a day's
-- points never depend on how its events were split into batches.
CREATE TABLE fitpoints_daily_earnings (
    customer_id uuid NOT NULL,
    rule_id text NOT NULL,
    day date NOT NULL,
    units double precision NOT NULL DEFAULT 0,
    points bigint NOT NULL DEFAULT 0 CHECK (points >= 0),
    PRIMARY KEY (customer_id, rule_id, day)
);

ALTER TABLE activity_events ENABLE ROW LEVEL SECURITY;
ALTER TABLE activity_events FORCE ROW LEVEL SECURITY;
CREATE POLICY activity_events_platform_only ON activity_events USING (app_is_platform()) WITH CHECK (app_is_platform());
ALTER TABLE fitpoints_rule_sets ENABLE ROW LEVEL SECURITY;
ALTER TABLE fitpoints_rule_sets FORCE ROW LEVEL SECURITY;
CREATE POLICY fitpoints_rule_sets_platform_only ON fitpoints_rule_sets USING (app_is_platform()) WITH CHECK (app_is_platform());
ALTER TABLE fitpoints_daily_earnings ENABLE ROW LEVEL SECURITY;
ALTER TABLE fitpoints_daily_earnings FORCE ROW LEVEL SECURITY;
CREATE POLICY fitpoints_daily_earnings_platform_only ON fitpoints_daily_earnings USING (app_is_platform()) WITH CHECK (app_is_platform());
GRANT SELECT, INSERT ON activity_events TO backoffice_app;
GRANT SELECT, INSERT ON fitpoints_rule_sets TO backoffice_app;
GRANT SELECT, INSERT, UPDATE ON fitpoints_daily_earnings TO backoffice_app;

-- Each activity event, badge award and account event is paid at most once, whatever retries or
-- concurrent requests do: the database refuses a second earning for the same source.
CREATE UNIQUE INDEX fitpoints_transfers_earned_once ON fitpoints_transfers (source_event_id) WHERE kind = 'earning' AND source_event_id IS NOT NULL;
