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
-- A reserved attempt is pending until its check fails (failed) or succeeds (deleted): every row
-- counts toward the limit on checks, only failed ones toward a lockout.
ALTER TABLE console_sign_in_failures ADD COLUMN failed boolean NOT NULL DEFAULT false;
GRANT UPDATE ON console_sign_in_failures TO backoffice_app;

-- 3. A console read that is not the operator's own doing (a live page's periodic read) does not
--    keep its session alive: authenticate_console(…, p_touch => false) leaves last_seen_at as it
--    is, so an open tab does not defeat the idle timeout.
DROP FUNCTION authenticate_console(bytea, integer, integer, boolean, text);
CREATE FUNCTION authenticate_console(
    p_secret_hash bytea, p_idle_seconds integer, p_absolute_seconds integer, p_local boolean, p_stage text, p_touch boolean
)
    RETURNS TABLE (session_id uuid, operator_id uuid, tenant_id uuid, role text)
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
    AS $$
DECLARE
    v_session uuid;
    v_operator uuid;
    v_tenant uuid;
    v_role text;
BEGIN
    PERFORM set_config('app.tenant_id', '00000000-0000-0000-0000-000000000000', p_local);
    SELECT s.id, s.operator_id, s.tenant_id, o.role INTO v_session, v_operator, v_tenant, v_role
        FROM console_sessions s
        JOIN operators o ON o.tenant_id = s.tenant_id AND o.id = s.operator_id
        WHERE s.secret_hash = p_secret_hash AND s.ended_at IS NULL AND o.status = 'active' AND s.stage = p_stage
          AND s.last_seen_at > now() - make_interval(secs => p_idle_seconds)
          AND s.created_at > now() - make_interval(secs => p_absolute_seconds);
    IF v_session IS NULL THEN
        PERFORM set_config('app.tenant_id', '', p_local);
        PERFORM set_config('app.role', '', p_local);
        RETURN;
    END IF;
    IF p_touch THEN
        UPDATE console_sessions SET last_seen_at = now()
            WHERE id = (SELECT id FROM console_sessions WHERE id = v_session AND last_seen_at < now() - interval '10 seconds'
                        FOR UPDATE SKIP LOCKED);
    END IF;
    PERFORM set_config('app.tenant_id', v_tenant::text, p_local);
    PERFORM set_config('app.role', v_role, p_local);
    RETURN QUERY SELECT v_session, v_operator, v_tenant, v_role;
END
$$;
REVOKE ALL ON FUNCTION authenticate_console(bytea, integer, integer, boolean, text, boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION authenticate_console(bytea, integer, integer, boolean, text, boolean) TO backoffice_app;
