-- A goods file the console has checked (a dry run) and holds until its uploader applies it: one
-- hour, for the session that uploaded it. The import's audit event carries the file's SHA-256; the
-- file itself is deleted when it is applied, and an expired one when its tenant stages another.

CREATE TABLE staged_goods_imports (
    id uuid PRIMARY KEY,
    tenant_id uuid NOT NULL,
    session_id uuid NOT NULL REFERENCES console_sessions (id),
    file_name text NOT NULL CHECK (length(file_name) <= 255),
    format text NOT NULL CHECK (format IN ('csv', 'jsonl')),
    contents bytea NOT NULL,
    sha256 text NOT NULL,
    report jsonb NOT NULL,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL
);
CREATE INDEX staged_goods_imports_tenant ON staged_goods_imports (tenant_id, expires_at);
ALTER TABLE staged_goods_imports ENABLE ROW LEVEL SECURITY;
ALTER TABLE staged_goods_imports FORCE ROW LEVEL SECURITY;
CREATE POLICY staged_goods_imports_visible ON staged_goods_imports USING (app_sees(tenant_id)) WITH CHECK (app_sees(tenant_id));
GRANT SELECT, INSERT, DELETE ON staged_goods_imports TO backoffice_app;
