-- Mails sent once a day about the day before (UTC): a shop's summary to its people who want it, and
-- the appeals waiting to the managers who want them. `daily_mails` records each day's run of each,
-- so the job, however often it wakes and on however many processes, sends a day's mail once.
INSERT INTO mail_topics (topic, roles) VALUES
    ('daily_summary', '{partner_admin,partner_staff}'),
    ('appeals_waiting', '{platform_admin,backend_manager}');

CREATE TABLE daily_mails (
    topic text NOT NULL REFERENCES mail_topics (topic),
    day date NOT NULL,
    sent_at timestamptz NOT NULL,
    mails integer NOT NULL CHECK (mails >= 0),
    PRIMARY KEY (topic, day)
);
ALTER TABLE daily_mails ENABLE ROW LEVEL SECURITY;
ALTER TABLE daily_mails FORCE ROW LEVEL SECURITY;
CREATE POLICY daily_mails_platform_only ON daily_mails USING (app_is_platform()) WITH CHECK (app_is_platform());
GRANT SELECT, INSERT, UPDATE ON daily_mails TO backoffice_app;
