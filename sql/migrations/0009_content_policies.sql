-- Content policies: versioned Markdown documents (what is not allowed, and what happens to it)
-- that managers publish and the app shows. Versions are never changed or removed; the current
-- version of a policy is its highest. They belong to the platform: only platform sessions see them.
CREATE TABLE content_policies (
    slug text NOT NULL CHECK (slug ~ '^[a-z0-9][a-z0-9-]{1,62}$'),
    version integer NOT NULL CHECK (version >= 1),
    id uuid NOT NULL UNIQUE,
    title text NOT NULL CHECK (length(title) BETWEEN 1 AND 200),
    body text NOT NULL CHECK (length(body) BETWEEN 1 AND 100000),
    published_at timestamptz NOT NULL DEFAULT now(),
    published_by uuid,
    PRIMARY KEY (slug, version)
);

ALTER TABLE content_policies ENABLE ROW LEVEL SECURITY;
ALTER TABLE content_policies FORCE ROW LEVEL SECURITY;
CREATE POLICY content_policies_platform_only ON content_policies USING (app_is_platform()) WITH CHECK (app_is_platform());
GRANT SELECT, INSERT ON content_policies TO backoffice_app;
