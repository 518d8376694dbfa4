-- An access log's export line leaves out the fields that are NULL (an actor the system, a token or
-- a session absent), as the contract's HealthAccess and the list API leave them out. The hashed
-- canonical text keeps them: it is stored, and the offline verifier reads an absent field as NULL.
CREATE OR REPLACE FUNCTION health_access_line(e health_access_events) RETURNS text
    LANGUAGE sql STABLE
    AS $$ SELECT (jsonb_strip_nulls(health_access_fields(e.chain, e.seq, e.occurred_at, e.customer_id, e.actor_id,
            e.actor_role, e.purpose, e.via, e.request_id, e.token_id, e.session_id))
        || jsonb_build_object('id', e.id, 'prev_hash', encode(e.prev_hash, 'hex'), 'hash', encode(e.hash, 'hex'),
            'canonical', convert_from(e.canonical, 'UTF8')))::text $$;
