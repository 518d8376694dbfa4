-- OAuth access tokens (`tokens` rows with `client_id`) are issued every 15 minutes per client and are
-- useless once expired (their JWT's `exp` refuses them first). `maintenance purge` deletes those
-- expired over an hour ago. The service role may delete them and nothing else of `tokens`: personal
-- API tokens are revoked, never deleted.
GRANT DELETE ON tokens TO backoffice_app;
CREATE POLICY tokens_deleted_only_access_tokens ON tokens AS RESTRICTIVE FOR DELETE
    USING (client_id IS NOT NULL);
