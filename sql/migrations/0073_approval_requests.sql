-- Dual control (policies/approvals.yaml): a change the policy holds for a second person's approval
-- is recorded here, with who asked, what (the change itself, as JSON, holding no secret) and why,
-- and takes effect only when an eligible second person approves it, in the approval's transaction.
-- A request is decided once (approved or rejected, `decided_*`); past `expires_at` it does nothing.
CREATE TABLE approval_requests (
    tenant_id uuid NOT NULL REFERENCES tenants (id),
    id uuid NOT NULL,
    action text NOT NULL,
    target_type text NOT NULL,
    target_id text NOT NULL,
    summary text NOT NULL CHECK (length(summary) BETWEEN 1 AND 500),
    change jsonb NOT NULL,
    amount bigint,
    reason text CHECK (length(reason) <= 1000),
    requested_by uuid NOT NULL,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL CHECK (expires_at > created_at),
    status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'rejected')),
    decided_by uuid,
    decided_at timestamptz,
    decision_note text CHECK (length(decision_note) <= 1000),
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, requested_by) REFERENCES operators (tenant_id, id),
    FOREIGN KEY (tenant_id, decided_by) REFERENCES operators (tenant_id, id),
    CHECK ((status = 'pending') = (decided_by IS NULL AND decided_at IS NULL)),
    -- never approved by its requester (who may withdraw it: rejected)
    CHECK (status <> 'approved' OR decided_by <> requested_by)
);
CREATE INDEX approval_requests_id ON approval_requests (id);
CREATE INDEX approval_requests_newest ON approval_requests (tenant_id, created_at DESC, id DESC);
CREATE INDEX approval_requests_pending_target ON approval_requests (target_type, target_id) WHERE status = 'pending';

ALTER TABLE approval_requests ENABLE ROW LEVEL SECURITY;
ALTER TABLE approval_requests FORCE ROW LEVEL SECURITY;
CREATE POLICY approval_requests_visible ON approval_requests USING (app_sees(tenant_id)) WITH CHECK (app_sees(tenant_id));
-- What was asked and approved never changes: only the decision's columns are written, once.
GRANT SELECT, INSERT ON approval_requests TO backoffice_app;
GRANT UPDATE (status, decided_by, decided_at, decision_note) ON approval_requests TO backoffice_app;
CREATE FUNCTION approval_requests_decided_once() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.status <> 'pending' THEN
        RAISE EXCEPTION 'approval request % was % already', OLD.id, OLD.status USING ERRCODE = 'check_violation';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER approval_requests_decided_once BEFORE UPDATE ON approval_requests
    FOR EACH ROW EXECUTE FUNCTION approval_requests_decided_once();
