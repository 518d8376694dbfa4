-- Articles: what on-staff experts write for the app, reviewed by backend managers. An article has
-- versions, never changed once written; `version` is the newest (the one being written or in
-- review), `live_version` the one the app shows (kept live while a newer one is in review). They
-- belong to the platform: only platform sessions see them; who sees which is the service's rule
-- (an expert sees only what it wrote).
CREATE TABLE articles (
    id uuid PRIMARY KEY,
    slug text NOT NULL UNIQUE CHECK (slug ~ '^[a-z0-9][a-z0-9-]{1,99}$'),
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

CREATE TABLE article_versions (
    article_id uuid NOT NULL REFERENCES articles (id),
    version integer NOT NULL CHECK (version >= 1),
    title text NOT NULL CHECK (length(title) BETWEEN 1 AND 200),
    summary text NOT NULL CHECK (length(summary) BETWEEN 1 AND 500),
    category text NOT NULL CHECK (category IN ('nutrition', 'exercise', 'recovery', 'mindset', 'sleep', 'wellbeing')),
    body text NOT NULL CHECK (length(body) BETWEEN 1 AND 100000),
    html text NOT NULL,
    cover_url text CHECK (cover_url ~ '^https://'),
    byline text CHECK (length(byline) BETWEEN 1 AND 120),
    tags text[] NOT NULL DEFAULT '{}',
    words integer NOT NULL CHECK (words >= 0),
    reading_minutes integer NOT NULL CHECK (reading_minutes >= 1),
    written_by uuid NOT NULL,
    written_at timestamptz NOT NULL,
    PRIMARY KEY (article_id, version)
);

-- The app's list: live articles, newest first publication first.
CREATE INDEX articles_live ON articles (first_published_at DESC, id DESC)
    WHERE live_version IS NOT NULL AND state <> 'archived';
-- The consoles' lists and the review queue.
CREATE INDEX articles_by_change ON articles (updated_at DESC, id DESC);
CREATE INDEX articles_in_review ON articles (submitted_at, id) WHERE state = 'in_review';
CREATE INDEX articles_by_author ON articles (author_id, updated_at DESC);

ALTER TABLE articles ENABLE ROW LEVEL SECURITY;
ALTER TABLE articles FORCE ROW LEVEL SECURITY;
CREATE POLICY articles_platform_only ON articles USING (app_is_platform()) WITH CHECK (app_is_platform());
GRANT SELECT, INSERT, UPDATE ON articles TO backoffice_app;

ALTER TABLE article_versions ENABLE ROW LEVEL SECURITY;
ALTER TABLE article_versions FORCE ROW LEVEL SECURITY;
CREATE POLICY article_versions_platform_only ON article_versions
    USING (app_is_platform()) WITH CHECK (app_is_platform());
-- Versions are only ever added.
GRANT SELECT, INSERT ON article_versions TO backoffice_app;
