-- Read replicas (BACKOFFICE_READ_DATABASE_URL): a hot standby cannot write, so authenticating a
-- read session there must not record the token's use. A token's last_used_at is then kept by its
-- changes and its reads on the primary only (still at most a minute old for a token in use there).

CREATE OR REPLACE FUNCTION authenticate_principal(p_secret_hash bytea, p_local boolean)
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
    IF NOT pg_is_in_recovery() THEN  -- a read replica authenticates without writing
        UPDATE tokens SET last_used_at = now()
            WHERE id = (SELECT id FROM tokens WHERE id = v_token AND (last_used_at IS NULL OR last_used_at < now() - interval '60 seconds')
                        FOR UPDATE SKIP LOCKED);
    END IF;
    PERFORM set_config('app.tenant_id', v_tenant::text, p_local);
    PERFORM set_config('app.role', v_role, p_local);
    RETURN QUERY SELECT v_token, v_operator, v_tenant, v_role;
END
$$;
