-- FitPoints: a double-entry, append-only ledger.
--
-- Accounts are customer wallets, the platform's issuance, redemption and expiry accounts, and one
-- budget account per challenge. Every movement of points is a set of transfers; a transfer takes
-- `amount` (> 0) from one account and gives it to another, so each is a balanced pair of entries
-- by construction (the debit and the credit) and every movement balances. Transfers are never
-- changed or removed.
--
-- Balances are derived: a statement-level trigger applies each inserted set of transfers to the
-- accounts' totals (credited, debited, balance = credited − debited) in the same statement, after
-- locking the accounts concerned in id order (no deadlock between concurrent movements). The
-- service role may insert transfers but cannot write a balance. A wallet or a challenge budget
-- never goes below zero: the CHECK refuses the statement, also when concurrent debits race (the
-- second waits for the first's row lock, then sees its balance).
--
-- A wallet's id is its customer's id and a budget's id is its challenge's id, so movements need
-- no lookup. There is deliberately no foreign key to customers: a purged customer's ledger stays
-- (it holds no personal data, and the platform accounts' history must still balance).

CREATE TABLE fitpoints_accounts (
    id uuid PRIMARY KEY,
    kind text NOT NULL CHECK (kind IN ('wallet', 'issuance', 'redemption', 'expiry', 'challenge_budget')),
    credited bigint NOT NULL DEFAULT 0 CHECK (credited >= 0),
    debited bigint NOT NULL DEFAULT 0 CHECK (debited >= 0),
    balance bigint NOT NULL DEFAULT 0,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    CHECK (balance = credited - debited),
    CONSTRAINT fitpoints_wallet_not_negative CHECK (kind <> 'wallet' OR balance >= 0),
    CONSTRAINT fitpoints_budget_not_negative CHECK (kind <> 'challenge_budget' OR balance >= 0)
);
-- One issuance, one redemption and one expiry account, with ids known to the code.
CREATE UNIQUE INDEX fitpoints_platform_accounts ON fitpoints_accounts (kind) WHERE kind IN ('issuance', 'redemption', 'expiry');
INSERT INTO fitpoints_accounts (id, kind) VALUES
    ('00000000-0000-0000-0000-0000000f0001', 'issuance'),
    ('00000000-0000-0000-0000-0000000f0002', 'redemption'),
    ('00000000-0000-0000-0000-0000000f0003', 'expiry');

CREATE TABLE fitpoints_transfers (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    movement_id uuid NOT NULL,
    kind text NOT NULL CHECK (kind IN ('adjustment', 'earning', 'challenge_funding', 'challenge_reward', 'redemption', 'refund', 'expiry')),
    debit_account uuid NOT NULL,
    credit_account uuid NOT NULL,
    amount bigint NOT NULL CHECK (amount > 0),
    reason text CHECK (length(reason) <= 1000),
    rule_id text CHECK (length(rule_id) <= 100),
    rule_version integer,
    source_event_id text CHECK (length(source_event_id) <= 200),
    challenge_id uuid,
    created_by uuid,
    created_at timestamptz NOT NULL DEFAULT now(),
    CHECK (debit_account <> credit_account),
    CHECK ((rule_id IS NULL) = (rule_version IS NULL))
);
CREATE INDEX fitpoints_transfers_debit ON fitpoints_transfers (debit_account, id);
CREATE INDEX fitpoints_transfers_credit ON fitpoints_transfers (credit_account, id);
CREATE INDEX fitpoints_transfers_movement ON fitpoints_transfers (movement_id);

-- Applies a statement's transfers to the accounts' totals; an unknown account refuses the statement.
CREATE FUNCTION fitpoints_apply_transfers() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
    AS $$
DECLARE
    v_expected integer;
    v_applied integer;
BEGIN
    SELECT count(*) INTO v_expected FROM (SELECT credit_account FROM new_transfers UNION SELECT debit_account FROM new_transfers) concerned;
    PERFORM 1 FROM fitpoints_accounts
        WHERE id IN (SELECT credit_account FROM new_transfers UNION SELECT debit_account FROM new_transfers)
        ORDER BY id FOR UPDATE;
    WITH moves AS (
        SELECT credit_account AS account, amount AS credit, 0::bigint AS debit FROM new_transfers
        UNION ALL
        SELECT debit_account, 0, amount FROM new_transfers
    ), deltas AS (SELECT account, sum(credit) AS credit, sum(debit) AS debit FROM moves GROUP BY account)
    UPDATE fitpoints_accounts a
        SET credited = a.credited + d.credit, debited = a.debited + d.debit, balance = a.balance + d.credit - d.debit, updated_at = now()
        FROM deltas d WHERE a.id = d.account;
    GET DIAGNOSTICS v_applied = ROW_COUNT;
    IF v_applied <> v_expected THEN
        RAISE EXCEPTION 'a FitPoints transfer names an account that does not exist' USING ERRCODE = 'foreign_key_violation';
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER fitpoints_transfers_apply AFTER INSERT ON fitpoints_transfers
    REFERENCING NEW TABLE AS new_transfers FOR EACH STATEMENT EXECUTE FUNCTION fitpoints_apply_transfers();

CREATE FUNCTION fitpoints_refuse_change() RETURNS trigger
    LANGUAGE plpgsql
    AS $$ BEGIN RAISE EXCEPTION 'fitpoints_transfers is append-only: % refused', TG_OP USING ERRCODE = 'insufficient_privilege'; END $$;
CREATE TRIGGER fitpoints_transfers_no_update BEFORE UPDATE OR DELETE ON fitpoints_transfers FOR EACH ROW EXECUTE FUNCTION fitpoints_refuse_change();
CREATE TRIGGER fitpoints_transfers_no_truncate BEFORE TRUNCATE ON fitpoints_transfers FOR EACH STATEMENT EXECUTE FUNCTION fitpoints_refuse_change();

-- Accounts whose stored totals disagree with their transfers (empty when the ledger is consistent).
CREATE FUNCTION fitpoints_inconsistent_accounts()
    RETURNS TABLE (account uuid, stored_balance bigint, derived_balance bigint)
    LANGUAGE sql STABLE
    AS $$
    SELECT a.id, a.balance, coalesce(c.total, 0) - coalesce(d.total, 0)
    FROM fitpoints_accounts a
    LEFT JOIN (SELECT credit_account, sum(amount) AS total FROM fitpoints_transfers GROUP BY credit_account) c ON c.credit_account = a.id
    LEFT JOIN (SELECT debit_account, sum(amount) AS total FROM fitpoints_transfers GROUP BY debit_account) d ON d.debit_account = a.id
    WHERE a.balance <> coalesce(c.total, 0) - coalesce(d.total, 0)
       OR a.credited <> coalesce(c.total, 0) OR a.debited <> coalesce(d.total, 0)
$$;

ALTER TABLE fitpoints_accounts ENABLE ROW LEVEL SECURITY;
ALTER TABLE fitpoints_accounts FORCE ROW LEVEL SECURITY;
CREATE POLICY fitpoints_accounts_platform_only ON fitpoints_accounts USING (app_is_platform()) WITH CHECK (app_is_platform());
ALTER TABLE fitpoints_transfers ENABLE ROW LEVEL SECURITY;
ALTER TABLE fitpoints_transfers FORCE ROW LEVEL SECURITY;
CREATE POLICY fitpoints_transfers_platform_only ON fitpoints_transfers USING (app_is_platform()) WITH CHECK (app_is_platform());
-- The service opens wallets and budgets (with nothing in them) and records transfers; it never writes a total.
GRANT SELECT ON fitpoints_accounts TO backoffice_app;
GRANT INSERT (id, kind) ON fitpoints_accounts TO backoffice_app;
GRANT SELECT, INSERT ON fitpoints_transfers TO backoffice_app;
GRANT EXECUTE ON FUNCTION fitpoints_inconsistent_accounts() TO backoffice_app;
