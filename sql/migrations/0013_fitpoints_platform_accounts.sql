-- The platform's issuance, redemption and expiry accounts take part in nearly every movement of
-- FitPoints. Keeping their totals in a row made every movement queue on that row's lock until its
-- transaction committed (measured: concurrent activity batches ran one at a time). They may go
-- below zero and guard nothing, so their balances are now derived when read (fitpoints_balances),
-- and the trigger keeps stored totals only for wallets and challenge budgets: the accounts that
-- must never go below zero, locked in id order as before.

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
        SELECT credit_account AS account, amount AS credit, 0::bigint AS debit FROM new_transfers
        UNION ALL
        SELECT debit_account, 0, amount FROM new_transfers
    ), deltas AS (SELECT account, sum(credit) AS credit, sum(debit) AS debit FROM moves WHERE account <> ALL (v_platform) GROUP BY account)
    UPDATE fitpoints_accounts a
        SET credited = a.credited + d.credit, debited = a.debited + d.debit, balance = a.balance + d.credit - d.debit, updated_at = now()
        FROM deltas d WHERE a.id = d.account;
    GET DIAGNOSTICS v_applied = ROW_COUNT;
    IF v_applied <> v_expected THEN
        RAISE EXCEPTION 'a FitPoints transfer names an account that does not exist' USING ERRCODE = 'foreign_key_violation';
    END IF;
    RETURN NULL;
END $$;

-- The platform accounts' rows no longer carry totals.
UPDATE fitpoints_accounts SET credited = 0, debited = 0, balance = 0 WHERE kind IN ('issuance', 'redemption', 'expiry');

-- Every account's balance: stored for wallets and budgets, summed from the transfers for the platform's.
CREATE VIEW fitpoints_balances WITH (security_invoker = true) AS
    SELECT a.id, a.kind,
           CASE WHEN a.kind IN ('wallet', 'challenge_budget') THEN a.credited
                ELSE coalesce((SELECT sum(amount) FROM fitpoints_transfers WHERE credit_account = a.id), 0)::bigint END AS credited,
           CASE WHEN a.kind IN ('wallet', 'challenge_budget') THEN a.debited
                ELSE coalesce((SELECT sum(amount) FROM fitpoints_transfers WHERE debit_account = a.id), 0)::bigint END AS debited,
           CASE WHEN a.kind IN ('wallet', 'challenge_budget') THEN a.balance
                ELSE (coalesce((SELECT sum(amount) FROM fitpoints_transfers WHERE credit_account = a.id), 0)
                    - coalesce((SELECT sum(amount) FROM fitpoints_transfers WHERE debit_account = a.id), 0))::bigint END AS balance
    FROM fitpoints_accounts a;
GRANT SELECT ON fitpoints_balances TO backoffice_app;

-- Wallets and budgets whose stored totals disagree with their transfers (empty when consistent).
CREATE OR REPLACE FUNCTION fitpoints_inconsistent_accounts()
    RETURNS TABLE (account uuid, stored_balance bigint, derived_balance bigint)
    LANGUAGE sql STABLE
    AS $$
    SELECT a.id, a.balance, coalesce(c.total, 0) - coalesce(d.total, 0)
    FROM fitpoints_accounts a
    LEFT JOIN (SELECT credit_account, sum(amount) AS total FROM fitpoints_transfers GROUP BY credit_account) c ON c.credit_account = a.id
    LEFT JOIN (SELECT debit_account, sum(amount) AS total FROM fitpoints_transfers GROUP BY debit_account) d ON d.debit_account = a.id
    WHERE a.kind IN ('wallet', 'challenge_budget')
      AND (a.balance <> coalesce(c.total, 0) - coalesce(d.total, 0) OR a.credited <> coalesce(c.total, 0) OR a.debited <> coalesce(d.total, 0))
$$;
