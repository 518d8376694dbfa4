-- A platform admin may decide a shop's approval request (a shop's OAuth client with a write
-- scope): the decider is any operator, not only one of the request's tenant.
ALTER TABLE approval_requests DROP CONSTRAINT approval_requests_tenant_id_decided_by_fkey;
ALTER TABLE approval_requests ADD FOREIGN KEY (decided_by) REFERENCES operators (id);

-- The person an OAuth client was registered for (who asked; the approver registered it when it
-- was held): for a client with a write scope, the only one who may take its secret.
ALTER TABLE oauth_clients ADD COLUMN owner_id uuid REFERENCES operators (id);
