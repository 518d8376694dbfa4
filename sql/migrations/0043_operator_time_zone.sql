-- Each operator's own time zone: the console shows times in it (the UTC instant stays in each
-- `<time>` element's `datetime` and title) and reads its forms' times in it. An IANA name, UTC
-- until the operator chooses another on the Security page; the service checks the name against
-- the zones it knows before writing it.
ALTER TABLE operators ADD COLUMN time_zone text NOT NULL DEFAULT 'UTC'
    CHECK (length(time_zone) BETWEEN 1 AND 64 AND time_zone ~ '^[A-Za-z0-9_+/-]+$');

-- A console session's principal now carries its operator's zone (the rest as in 0034).
DROP FUNCTION authenticate_console(bytea, integer, integer, boolean, text, boolean);
CREATE FUNCTION authenticate_console(
    p_secret_hash bytea, p_idle_seconds integer, p_absolute_seconds integer, p_local boolean, p_stage text, p_touch boolean
)
    RETURNS TABLE (session_id uuid, operator_id uuid, tenant_id uuid, role text, time_zone text)
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
    AS $$
DECLARE
    v_session uuid;
    v_operator uuid;
    v_tenant uuid;
    v_role text;
    v_zone text;
BEGIN
    PERFORM set_config('app.tenant_id', '00000000-0000-0000-0000-000000000000', p_local);
    SELECT s.id, s.operator_id, s.tenant_id, o.role, o.time_zone INTO v_session, v_operator, v_tenant, v_role, v_zone
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
    RETURN QUERY SELECT v_session, v_operator, v_tenant, v_role, v_zone;
END
$$;
REVOKE ALL ON FUNCTION authenticate_console(bytea, integer, integer, boolean, text, boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION authenticate_console(bytea, integer, integer, boolean, text, boolean) TO backoffice_app;
