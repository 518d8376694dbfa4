-- System messages: what the company tells customers in the app (announcements, maintenance
-- notices). They belong to the platform: only platform sessions see them. A message is a draft
-- until published, and retracted for good; whether a published one is scheduled, showing or
-- expired follows from publish_at and expires_at at the time of reading (no job moves it).
CREATE TABLE system_messages (
    id uuid PRIMARY KEY,
    title text NOT NULL CHECK (length(title) BETWEEN 1 AND 200),
    body text NOT NULL CHECK (length(body) BETWEEN 1 AND 20000),
    severity text NOT NULL CHECK (severity IN ('info', 'warning', 'maintenance', 'critical')),
    audience text NOT NULL CHECK (audience IN ('all', 'subscribers', 'non_subscribers')),
    publish_at timestamptz,
    expires_at timestamptz,
    window_starts_at timestamptz,
    window_ends_at timestamptz,
    status text NOT NULL DEFAULT 'draft' CHECK (status IN ('draft', 'published', 'retracted')),
    retracted_at timestamptz,
    retract_reason text CHECK (length(retract_reason) <= 1000),
    created_by uuid,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    version bigint NOT NULL DEFAULT 1,
    CHECK (expires_at IS NULL OR publish_at IS NULL OR expires_at > publish_at),
    CHECK ((severity = 'maintenance') = (window_starts_at IS NOT NULL AND window_ends_at IS NOT NULL)),
    CHECK (window_ends_at IS NULL OR window_ends_at > window_starts_at),
    CHECK (status <> 'published' OR publish_at IS NOT NULL)
);
-- The app's read: published messages by the time they start showing.
CREATE INDEX system_messages_showing ON system_messages (publish_at) WHERE status = 'published';
CREATE INDEX system_messages_created ON system_messages (created_at, id);

ALTER TABLE system_messages ENABLE ROW LEVEL SECURITY;
ALTER TABLE system_messages FORCE ROW LEVEL SECURITY;
CREATE POLICY system_messages_platform_only ON system_messages USING (app_is_platform()) WITH CHECK (app_is_platform());
GRANT SELECT, INSERT, UPDATE ON system_messages TO backoffice_app;
