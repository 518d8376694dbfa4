-- The console's second factor (TOTP) and the sign-in stages it adds.
--
-- 1. An operator's TOTP secret is stored sealed (AES-GCM under the service's second-factor key,
--    bound to the operator's id): the database never holds it in the clear. last_step is the
--    30-second step of the last code accepted, so a code is accepted once.
-- 2. Ten recovery codes per enrolment, each stored as the SHA-256 of the operator's id and the
--    code; a used code keeps its row with used_at.
-- 3. A console session has a stage: 'second_factor' (the password was right, a code is due),
--    'enrol' (the password was right, the role needs a second factor and the operator has none)
--    or 'signed_in'. Only a signed-in session reaches the console's pages; a session that passes
--    its second factor ends ('second_factor_passed') and a new one, with a new secret, starts.

CREATE TABLE operator_second_factors (
    tenant_id uuid NOT NULL,
    operator_id uuid NOT NULL,
    sealed_secret bytea NOT NULL CHECK (length(sealed_secret) > 28),
    enrolled_at timestamptz NOT NULL,
    last_step bigint NOT NULL,
    PRIMARY KEY (tenant_id, operator_id),
    FOREIGN KEY (tenant_id, operator_id) REFERENCES operators (tenant_id, id)
);
ALTER TABLE operator_second_factors ENABLE ROW LEVEL SECURITY;
ALTER TABLE operator_second_factors FORCE ROW LEVEL SECURITY;
CREATE POLICY operator_second_factors_visible ON operator_second_factors USING (app_sees(tenant_id)) WITH CHECK (app_sees(tenant_id));
GRANT SELECT, INSERT, UPDATE, DELETE ON operator_second_factors TO backoffice_app;

CREATE TABLE operator_recovery_codes (
    tenant_id uuid NOT NULL,
    operator_id uuid NOT NULL,
    code_hash bytea NOT NULL CHECK (length(code_hash) = 32),
    used_at timestamptz,
    PRIMARY KEY (tenant_id, operator_id, code_hash),
    FOREIGN KEY (tenant_id, operator_id) REFERENCES operator_second_factors (tenant_id, operator_id) ON DELETE CASCADE
);
ALTER TABLE operator_recovery_codes ENABLE ROW LEVEL SECURITY;
ALTER TABLE operator_recovery_codes FORCE ROW LEVEL SECURITY;
CREATE POLICY operator_recovery_codes_visible ON operator_recovery_codes USING (app_sees(tenant_id)) WITH CHECK (app_sees(tenant_id));
GRANT SELECT, INSERT, UPDATE, DELETE ON operator_recovery_codes TO backoffice_app;

ALTER TABLE console_sessions ADD COLUMN stage text NOT NULL DEFAULT 'signed_in'
    CHECK (stage IN ('second_factor', 'enrol', 'signed_in'));
ALTER TABLE console_sessions DROP CONSTRAINT console_sessions_ended_reason_check;
ALTER TABLE console_sessions ADD CONSTRAINT console_sessions_ended_reason_check
    CHECK (ended_reason IN ('signed_out', 'signed_out_everywhere', 'password_reset', 'operator_disabled', 'second_factor_passed',
                            'locked_out'));

-- The candidate now says whether the operator has a second factor.
DROP FUNCTION console_sign_in_candidate(text);
CREATE FUNCTION console_sign_in_candidate(p_email text)
    RETURNS TABLE (tenant_id uuid, operator_id uuid, role text, status text, password_hash text, second_factor boolean)
    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
    AS $$
    SELECT o.tenant_id, o.id, o.role, o.status, p.password_hash,
           EXISTS (SELECT 1 FROM operator_second_factors f WHERE f.tenant_id = o.tenant_id AND f.operator_id = o.id)
        FROM operator_passwords p JOIN operators o ON o.tenant_id = p.tenant_id AND o.id = p.operator_id
        WHERE lower(p.email) = lower(p_email) AND o.kind = 'person'
$$;
REVOKE ALL ON FUNCTION console_sign_in_candidate(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION console_sign_in_candidate(text) TO backoffice_app;

-- authenticate_console with the stage the request needs: a page of the console needs
-- 'signed_in'; the second-factor and enrolment steps of sign-in need theirs.
DROP FUNCTION authenticate_console(bytea, integer, integer, boolean);
CREATE FUNCTION authenticate_console(p_secret_hash bytea, p_idle_seconds integer, p_absolute_seconds integer, p_local boolean, p_stage text)
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
    UPDATE console_sessions SET last_seen_at = now()
        WHERE id = (SELECT id FROM console_sessions WHERE id = v_session AND last_seen_at < now() - interval '10 seconds'
                    FOR UPDATE SKIP LOCKED);
    PERFORM set_config('app.tenant_id', v_tenant::text, p_local);
    PERFORM set_config('app.role', v_role, p_local);
    RETURN QUERY SELECT v_session, v_operator, v_tenant, v_role;
END
$$;
REVOKE ALL ON FUNCTION authenticate_console(bytea, integer, integer, boolean, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION authenticate_console(bytea, integer, integer, boolean, text) TO backoffice_app;
