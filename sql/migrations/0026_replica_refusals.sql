-- A read replica authenticates with its own copy of tokens and operators, which lags the
-- primary's. A service reading on a replica asks the primary, at each check of the replica, for
-- the credentials refused lately (a token revoked, or its operator disabled) and sends their
-- reads to the primary, which refuses them.

CREATE FUNCTION recently_refused_credentials(p_within interval)
    RETURNS TABLE (secret_hash bytea)
    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
    AS $$
        SELECT t.secret_hash FROM tokens t WHERE t.revoked_at > now() - p_within
        UNION
        SELECT t.secret_hash FROM tokens t JOIN operators o ON o.tenant_id = t.tenant_id AND o.id = t.operator_id
            WHERE o.status = 'disabled' AND o.disabled_at > now() - p_within AND t.revoked_at IS NULL
    $$;
REVOKE ALL ON FUNCTION recently_refused_credentials(interval) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION recently_refused_credentials(interval) TO backoffice_app;

CREATE INDEX tokens_revoked_at ON tokens (revoked_at) WHERE revoked_at IS NOT NULL;
CREATE INDEX operators_disabled_at ON operators (disabled_at) WHERE disabled_at IS NOT NULL;
