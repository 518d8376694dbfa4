-- An access token's client (`tokens.client_id`) is a registered client.
ALTER TABLE tokens ADD FOREIGN KEY (client_id) REFERENCES oauth_clients (id);
