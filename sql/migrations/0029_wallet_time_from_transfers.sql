-- A wallet's or budget's updated_at is the time of its latest transfer, as the use case that
-- moved the points wrote it (the unit of work's clock), not the database's now(): every time a
-- use case returns comes from one clock that tests control.

CREATE OR REPLACE FUNCTION fitpoints_apply_transfers() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
    AS $$
DECLARE
    v_platform uuid[] := ARRAY['00000000-0000-0000-0000-0000000f0001', '00000000-0000-0000-0000-0000000f0002',
                               '00000000-0000-0000-0000-0000000f0003']::uuid[];
    v_expected integer;
    v_applied integer;
BEGIN
    SELECT count(*) INTO v_expected FROM (SELECT credit_account AS account FROM new_transfers UNION SELECT debit_account FROM new_transfers) concerned
        WHERE account <> ALL (v_platform);
    PERFORM 1 FROM fitpoints_accounts
        WHERE id IN (SELECT credit_account FROM new_transfers UNION SELECT debit_account FROM new_transfers) AND id <> ALL (v_platform)
        ORDER BY id FOR UPDATE;
    WITH moves AS (
        SELECT credit_account AS account, amount AS credit, 0::bigint AS debit, created_at FROM new_transfers
        UNION ALL
        SELECT debit_account, 0, amount, created_at FROM new_transfers
    ), deltas AS (
        SELECT account, sum(credit) AS credit, sum(debit) AS debit, max(created_at) AS at FROM moves WHERE account <> ALL (v_platform)
        GROUP BY account)
    UPDATE fitpoints_accounts a
        SET credited = a.credited + d.credit, debited = a.debited + d.debit, balance = a.balance + d.credit - d.debit, updated_at = d.at
        FROM deltas d WHERE a.id = d.account;
    GET DIAGNOSTICS v_applied = ROW_COUNT;
    IF v_applied <> v_expected THEN
        RAISE EXCEPTION 'a FitPoints transfer names an account that does not exist' USING ERRCODE = 'foreign_key_violation';
    END IF;
    RETURN NULL;
END $$;
