-- Least privilege for tokens: a token may be narrowed to some of its role's scopes (policies/access.yaml,
-- `scopes:`) and bound to source networks. NULL keeps today's meaning: every scope of the role, any address.
-- The service checks both on every request (the scope in its one permission check, the address at the
-- edge); authentication returns them with the principal.
ALTER TABLE tokens
    ADD COLUMN scopes text[] CHECK (scopes IS NULL OR cardinality(scopes) BETWEEN 1 AND 100),
    ADD COLUMN allowed_addresses cidr[] CHECK (allowed_addresses IS NULL OR cardinality(allowed_addresses) BETWEEN 1 AND 20);

-- The authentication functions return the two with the principal: their result type changes, so they
-- are dropped and made again (same bodies as 0020, two columns more).
DROP FUNCTION authenticate_request(bytea);
DROP FUNCTION authenticate_session(bytea);
DROP FUNCTION authenticate_principal(bytea, boolean);

CREATE FUNCTION authenticate_principal(p_secret_hash bytea, p_local boolean)
    RETURNS TABLE (token_id uuid, operator_id uuid, tenant_id uuid, role text, scopes text[], allowed_addresses text[])
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
    AS $$
DECLARE
    v_token uuid;
    v_operator uuid;
    v_tenant uuid;
    v_role text;
    v_scopes text[];
    v_addresses text[];
BEGIN
    PERFORM set_config('app.tenant_id', '00000000-0000-0000-0000-000000000000', p_local);
    SELECT t.id, t.operator_id, t.tenant_id, t.role, t.scopes, t.allowed_addresses::text[]
        INTO v_token, v_operator, v_tenant, v_role, v_scopes, v_addresses
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
    RETURN QUERY SELECT v_token, v_operator, v_tenant, v_role, v_scopes, v_addresses;
END
$$;
REVOKE ALL ON FUNCTION authenticate_principal(bytea, boolean) FROM PUBLIC;

CREATE FUNCTION authenticate_request(p_secret_hash bytea)
    RETURNS TABLE (token_id uuid, operator_id uuid, tenant_id uuid, role text, scopes text[], allowed_addresses text[])
    LANGUAGE sql SECURITY DEFINER SET search_path = public, pg_temp
    AS $$ SELECT * FROM authenticate_principal(p_secret_hash, true) $$;
REVOKE ALL ON FUNCTION authenticate_request(bytea) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION authenticate_request(bytea) TO backoffice_app;

CREATE FUNCTION authenticate_session(p_secret_hash bytea)
    RETURNS TABLE (token_id uuid, operator_id uuid, tenant_id uuid, role text, scopes text[], allowed_addresses text[])
    LANGUAGE sql SECURITY DEFINER SET search_path = public, pg_temp
    AS $$ SELECT * FROM authenticate_principal(p_secret_hash, false) $$;
REVOKE ALL ON FUNCTION authenticate_session(bytea) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION authenticate_session(bytea) TO backoffice_app;
