-- A purged author's moderation cases stay, with their decisions and statements of reasons (the
-- transparency export and the DSA's database of statements keep them): the purge erases the
-- author's id and the text (`CustomerDataRegistry`), so the author becomes optional and deleting a
-- customer no longer cascades to the cases.
ALTER TABLE moderation_cases ALTER COLUMN author_id DROP NOT NULL;
ALTER TABLE moderation_cases DROP CONSTRAINT moderation_cases_author_id_fkey;
ALTER TABLE moderation_cases ADD CONSTRAINT moderation_cases_author_id_fkey
    FOREIGN KEY (author_id) REFERENCES customers (id) ON DELETE SET NULL;

-- The purge's erasure of a purged author's moderation data (the moderation tables are the
-- moderators'; a platform manager's purge reaches them only through this): the cases keep their
-- decisions with the author and the text erased; the customer's reports of others' content go.
CREATE FUNCTION erase_deleted_customers_moderation(p_customers uuid[], p_deleted_before timestamptz)
    RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = public, pg_temp
    AS $$
DECLARE
    v_erased integer;
    v_gone uuid[];
BEGIN
    IF NOT (app_is_platform() AND coalesce(current_setting('app.role', true), '') IN ('backend_manager', 'platform_admin')) THEN
        RAISE EXCEPTION 'erasing moderation data is a platform manager''s' USING ERRCODE = 'insufficient_privilege';
    END IF;
    SELECT coalesce(array_agg(c.id), '{}') INTO v_gone FROM customers c
        WHERE c.id = ANY(p_customers) AND c.status = 'deleted' AND c.deleted_at < p_deleted_before;
    UPDATE moderation_cases SET author_id = NULL, content_text = 'erased', version = version + 1
        WHERE author_id = ANY(v_gone);
    GET DIAGNOSTICS v_erased = ROW_COUNT;
    DELETE FROM moderation_reports WHERE reporter_id = ANY(v_gone);
    RETURN v_erased;
END
$$;
REVOKE ALL ON FUNCTION erase_deleted_customers_moderation(uuid[], timestamptz) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION erase_deleted_customers_moderation(uuid[], timestamptz) TO backoffice_app;
