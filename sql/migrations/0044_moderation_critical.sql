-- A fourth severity for moderation cases: 4 critical (a life at risk: incitement to self-harm),
-- above 3 urgent, so such a case heads the queue whatever the reports of others.
ALTER TABLE moderation_cases DROP CONSTRAINT moderation_cases_severity_check;
ALTER TABLE moderation_cases ADD CONSTRAINT moderation_cases_severity_check CHECK (severity BETWEEN 1 AND 4);
