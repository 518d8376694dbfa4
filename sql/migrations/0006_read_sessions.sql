-- Reads without an explicit transaction: a GET request is authenticated by one statement that
-- makes the connection's session act for the principal, and each of its reads then runs as its own
-- statement, row-level security applying as inside a transaction. Two round trips for a list page
-- instead of four (BEGIN, authenticate, page, COMMIT).
--
-- authenticate_principal holds the one implementation; authenticate_request (for a request's
-- transaction, settings local to it) and authenticate_session (for a read session, settings kept
-- by the session until the next authentication) are its two entry points. Every other use of a
-- pooled connection sets the principal for its own transaction first (SET LOCAL wins over the
-- session's value), so a session's settings never reach another principal's work.
CREATE FUNCTION authenticate_principal(p_secret_hash bytea, p_local boolean)
    RETURNS TABLE (token_id uuid, operator_id uuid, tenant_id uuid, role text)
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
    AS $$
DECLARE
    v_token uuid;
    v_operator uuid;
    v_tenant uuid;
    v_role text;
BEGIN
    PERFORM set_config('app.tenant_id', '00000000-0000-0000-0000-000000000000', p_local);
    SELECT t.id, t.operator_id, t.tenant_id, t.role INTO v_token, v_operator, v_tenant, v_role
        FROM tokens t
        JOIN operators o ON o.tenant_id = t.tenant_id AND o.id = t.operator_id
        WHERE t.secret_hash = p_secret_hash AND t.revoked_at IS NULL AND t.expires_at > now() AND o.status = 'active';
    IF v_token IS NULL THEN
        PERFORM set_config('app.tenant_id', '', p_local);
        PERFORM set_config('app.role', '', p_local);
        RETURN;
    END IF;
    UPDATE tokens SET last_used_at = now()
        WHERE id = (SELECT id FROM tokens WHERE id = v_token AND (last_used_at IS NULL OR last_used_at < now() - interval '60 seconds')
                    FOR UPDATE SKIP LOCKED);
    PERFORM set_config('app.tenant_id', v_tenant::text, p_local);
    PERFORM set_config('app.role', v_role, p_local);
    RETURN QUERY SELECT v_token, v_operator, v_tenant, v_role;
END
$$;
REVOKE ALL ON FUNCTION authenticate_principal(bytea, boolean) FROM PUBLIC;

CREATE OR REPLACE FUNCTION authenticate_request(p_secret_hash bytea)
    RETURNS TABLE (token_id uuid, operator_id uuid, tenant_id uuid, role text)
    LANGUAGE sql SECURITY DEFINER SET search_path = public, pg_temp
    AS $$ SELECT * FROM authenticate_principal(p_secret_hash, true) $$;

CREATE FUNCTION authenticate_session(p_secret_hash bytea)
    RETURNS TABLE (token_id uuid, operator_id uuid, tenant_id uuid, role text)
    LANGUAGE sql SECURITY DEFINER SET search_path = public, pg_temp
    AS $$ SELECT * FROM authenticate_principal(p_secret_hash, false) $$;
REVOKE ALL ON FUNCTION authenticate_session(bytea) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION authenticate_session(bytea) TO backoffice_app;
