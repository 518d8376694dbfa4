-- Forum moderation. A case is one piece of the app's content (a post, comment or story) that the
-- screen held or masked or that customers reported: one open case per content, reports folded into
-- it (a reporter counts once). Decisions close a case, each with the facts, the ground and whether
-- it was automated: the statement of reasons. They belong to the platform: partners see none of it.
CREATE TABLE moderation_cases (
    id uuid PRIMARY KEY,
    content_kind text NOT NULL CHECK (content_kind IN ('post', 'comment', 'story')),
    content_id text NOT NULL CHECK (length(content_id) BETWEEN 1 AND 200),
    content_text text NOT NULL CHECK (length(content_text) BETWEEN 1 AND 10000),
    author_id uuid NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
    opened_by text NOT NULL CHECK (opened_by IN ('screen', 'report')),
    severity smallint NOT NULL CHECK (severity BETWEEN 1 AND 3),
    matched_rules text[] NOT NULL DEFAULT '{}',
    status text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'decided')),
    report_count integer NOT NULL DEFAULT 0 CHECK (report_count >= 0),
    assigned_to uuid REFERENCES operators (id),
    assigned_until timestamptz,
    opened_at timestamptz NOT NULL,
    decided_at timestamptz,
    -- the upheld decision was lifted on appeal (it no longer counts against the author)
    overturned_at timestamptz,
    version integer NOT NULL DEFAULT 1,
    CHECK ((status = 'decided') = (decided_at IS NOT NULL)),
    CHECK ((assigned_to IS NULL) = (assigned_until IS NULL))
);
CREATE UNIQUE INDEX moderation_cases_open_content ON moderation_cases (content_kind, content_id)
    WHERE status = 'open';
CREATE INDEX moderation_cases_queue ON moderation_cases (severity DESC, opened_at, id) WHERE status = 'open';
CREATE INDEX moderation_cases_author ON moderation_cases (author_id, decided_at);
CREATE INDEX moderation_cases_decided ON moderation_cases (decided_at) WHERE status = 'decided';

CREATE TABLE moderation_reports (
    case_id uuid NOT NULL REFERENCES moderation_cases (id) ON DELETE CASCADE,
    reporter_id uuid NOT NULL,
    reason text NOT NULL CHECK (reason ~ '^[a-z_]{1,40}$'),
    reported_at timestamptz NOT NULL,
    PRIMARY KEY (case_id, reporter_id)
);

-- A decision and its statement of reasons (the EU Digital Services Act, Art. 17). `seq` orders
-- decisions for the app's removals feed and the transparency export; removals are written one at a
-- time (an advisory lock), so a reader that has passed a seq never sees a smaller one appear.
CREATE TABLE moderation_decisions (
    id uuid PRIMARY KEY,
    seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
    case_id uuid NOT NULL REFERENCES moderation_cases (id) ON DELETE CASCADE,
    kind text NOT NULL CHECK (kind IN ('mask', 'hold', 'dismiss', 'remove', 'warn', 'lock')),
    automated boolean NOT NULL,
    removes_content boolean NOT NULL,
    ground text NOT NULL CHECK (length(ground) BETWEEN 1 AND 400 AND ground ~ '^[a-z0-9_.,]+$'),
    facts text NOT NULL CHECK (length(facts) BETWEEN 1 AND 4000),
    explanation text NOT NULL CHECK (length(explanation) BETWEEN 1 AND 4000),
    lock_id uuid REFERENCES account_locks (id) ON DELETE SET NULL,
    decided_by uuid,
    policy_digest text NOT NULL,
    decided_at timestamptz NOT NULL,
    CHECK (automated = (decided_by IS NULL))
);
CREATE INDEX moderation_decisions_case ON moderation_decisions (case_id, seq);
CREATE INDEX moderation_decisions_removals ON moderation_decisions (seq) WHERE removes_content;
CREATE INDEX moderation_decisions_time ON moderation_decisions (decided_at, seq);

-- The repeat-offender threshold in force: versions, the newest wins (none: the policy file's).
CREATE TABLE moderation_offender_thresholds (
    version integer PRIMARY KEY,
    upheld_cases integer NOT NULL CHECK (upheld_cases BETWEEN 1 AND 100),
    days integer NOT NULL CHECK (days BETWEEN 1 AND 365),
    set_by uuid NOT NULL,
    set_at timestamptz NOT NULL
);

-- An appeal may contest a moderation decision: it names the case (and the lock, if it locked).
ALTER TABLE appeals ALTER COLUMN lock_id DROP NOT NULL;
ALTER TABLE appeals ADD COLUMN case_id uuid REFERENCES moderation_cases (id) ON DELETE CASCADE;
ALTER TABLE appeals ADD CONSTRAINT appeals_contest_something CHECK (lock_id IS NOT NULL OR case_id IS NOT NULL);
CREATE UNIQUE INDEX appeals_open_per_case ON appeals (case_id) WHERE status = 'open' AND case_id IS NOT NULL;

DO $$
DECLARE t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['moderation_cases', 'moderation_reports', 'moderation_decisions',
        'moderation_offender_thresholds'] LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
        EXECUTE format('CREATE POLICY %I ON %I USING (app_is_platform()) WITH CHECK (app_is_platform())',
            t || '_platform_only', t);
    END LOOP;
END $$;
GRANT SELECT, INSERT, UPDATE ON moderation_cases TO backoffice_app;
GRANT SELECT, INSERT ON moderation_reports, moderation_decisions, moderation_offender_thresholds TO backoffice_app;

-- An author's record: cases upheld against them (content removed, not overturned on appeal), those
-- decided since `since`, and account locks. Read with the caller's rights (RLS applies).
CREATE FUNCTION moderation_author_history(author uuid, since timestamptz)
RETURNS TABLE (upheld bigint, recent bigint, locks bigint) LANGUAGE sql STABLE AS $$
    SELECT count(*), count(*) FILTER (WHERE c.decided_at >= since),
        (SELECT count(*) FROM account_locks l WHERE l.customer_id = author)
    FROM moderation_cases c
    WHERE c.author_id = author AND c.status = 'decided' AND c.overturned_at IS NULL
        AND EXISTS (SELECT 1 FROM moderation_decisions d WHERE d.case_id = c.id AND d.removes_content) $$;
