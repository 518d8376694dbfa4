-- Sign-in at the door: one form of an email, failures keyed by a keyed digest, attempts reserved
-- before any password work.
--
-- 1. Operators' emails are stored in one normalised form (the service's EmailAddress.normalised:
--    NFKC, then lower case) and compared exactly: PostgreSQL's lower() follows the C library and
--    disagrees with the service on some letters (U+0130), so it is no longer used to match. The
--    rows already stored are normalised here by the database's own NFKC and lower(), which agree
--    with the service on every email the service could have stored so far (ASCII and Latin).
-- 2. A failed (or reserved) sign-in no longer keeps the email typed, which may be a password typed
--    in the wrong field: it keeps an HMAC-SHA256 of the normalised email under a key of the
--    server's (never in the database), and the address as the per-address limit counts it (an
--    IPv4 address, or an IPv6 address's /64). Rows older than the failure window are purged by
--    `maintenance purge`. The rows stored until now hold typed text: they are deleted.

UPDATE operators SET email = lower(normalize(btrim(email), NFKC)) WHERE email <> lower(normalize(btrim(email), NFKC));
UPDATE operator_passwords SET email = lower(normalize(btrim(email), NFKC)) WHERE email <> lower(normalize(btrim(email), NFKC));

DROP INDEX operators_email;
CREATE UNIQUE INDEX operators_email ON operators (tenant_id, email);
DROP INDEX operator_passwords_email;
CREATE UNIQUE INDEX operator_passwords_email ON operator_passwords (email);

DROP FUNCTION console_sign_in_candidate(text);
CREATE FUNCTION console_sign_in_candidate(p_email text)
    RETURNS TABLE (tenant_id uuid, operator_id uuid, role text, status text, password_hash text, second_factor boolean)
    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
    AS $$
    SELECT o.tenant_id, o.id, o.role, o.status, p.password_hash,
           EXISTS (SELECT 1 FROM operator_second_factors f WHERE f.tenant_id = o.tenant_id AND f.operator_id = o.id)
        FROM operator_passwords p JOIN operators o ON o.tenant_id = p.tenant_id AND o.id = p.operator_id
        WHERE p.email = p_email AND o.kind = 'person'
$$;
REVOKE ALL ON FUNCTION console_sign_in_candidate(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION console_sign_in_candidate(text) TO backoffice_app;

DELETE FROM console_sign_in_failures;
DROP INDEX console_sign_in_failures_email;
DROP INDEX console_sign_in_failures_address;
ALTER TABLE console_sign_in_failures DROP COLUMN email;
ALTER TABLE console_sign_in_failures ADD COLUMN email_digest bytea NOT NULL CHECK (length(email_digest) = 32);
ALTER TABLE console_sign_in_failures RENAME COLUMN source_ip TO address;
CREATE INDEX console_sign_in_failures_email ON console_sign_in_failures (email_digest, at);
CREATE INDEX console_sign_in_failures_address ON console_sign_in_failures (address, at);
CREATE INDEX console_sign_in_failures_at ON console_sign_in_failures (at);
ALTER TABLE console_sign_in_failures ADD COLUMN id uuid PRIMARY KEY;
