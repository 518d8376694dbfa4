-- One transaction per request, authenticated in its first statement.
--
-- authenticate_request resolves a presented token (by its SHA-256) to its principal and makes the
-- caller's transaction act for it (app.tenant_id / app.role, local to the transaction), so a
-- request needs one pool lease and one round trip for both. Revoked or expired tokens and tokens
-- of disabled operators resolve to nothing (and the transaction acts for nobody: it sees no row).
-- last_used_at is touched at most once a minute, and never waits for another request doing it.
CREATE FUNCTION authenticate_request(p_secret_hash bytea)
    RETURNS TABLE (token_id uuid, operator_id uuid, tenant_id uuid, role text)
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
    AS $$
DECLARE
    v_token uuid;
    v_operator uuid;
    v_tenant uuid;
    v_role text;
BEGIN
    PERFORM set_config('app.tenant_id', '00000000-0000-0000-0000-000000000000', true);
    SELECT t.id, t.operator_id, t.tenant_id, t.role INTO v_token, v_operator, v_tenant, v_role
        FROM tokens t
        JOIN operators o ON o.tenant_id = t.tenant_id AND o.id = t.operator_id
        WHERE t.secret_hash = p_secret_hash AND t.revoked_at IS NULL AND t.expires_at > now() AND o.status = 'active';
    IF v_token IS NULL THEN
        PERFORM set_config('app.tenant_id', '', true);
        PERFORM set_config('app.role', '', true);
        RETURN;
    END IF;
    UPDATE tokens SET last_used_at = now()
        WHERE id = (SELECT id FROM tokens WHERE id = v_token AND (last_used_at IS NULL OR last_used_at < now() - interval '60 seconds')
                    FOR UPDATE SKIP LOCKED);
    PERFORM set_config('app.tenant_id', v_tenant::text, true);
    PERFORM set_config('app.role', v_role, true);
    RETURN QUERY SELECT v_token, v_operator, v_tenant, v_role;
END
$$;
REVOKE ALL ON FUNCTION authenticate_request(bytea) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION authenticate_request(bytea) TO backoffice_app;

-- Replaced by authenticate_request.
DROP FUNCTION authenticate_token(bytea);
