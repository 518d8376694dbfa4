-- Ledger identity: no id supplied from outside can name a ledger account that is not its own.
--
-- A wallet's id is its customer's, a challenge budget's its challenge's, and the platform's three
-- accounts have fixed ids. A customer's id comes from the app (accounts.sync); a wallet used to be
-- opened with ON CONFLICT DO NOTHING, so a customer synced with the issuance account's id, or with
-- a challenge's, silently took that account as its "wallet" (redeeming from issuance, which may go
-- below zero, or spending a challenge's budget).
--
-- Now the three kinds of owner never share an id:
-- - a customer whose id is a ledger account other than its own wallet, or a challenge's, is
--   refused (unique_violation, constraint fitpoints_wallet_identity), and nothing is written;
-- - a challenge whose id is a customer's or a ledger account's is refused the same way
--   (constraint fitpoints_budget_identity);
-- - a challenge budget is opened only under an id that is not another kind of account (the
--   service checks what it opened).
-- A purged customer's wallet stays (its history balances), so the same customer synced again finds
-- its own wallet: that is not a collision.
--
-- Every movement already names its cause uniquely in the database for earnings (badges included:
-- fitpoints_transfers_earned_once) and for an order's redemption and refund
-- (fitpoints_transfers_order_once). A challenge's rewards gain the same: one reward per challenge
-- and wallet, so a settlement can never pay twice, whatever the service does.

CREATE OR REPLACE FUNCTION fitpoints_open_customer_wallets() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
    AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM new_customers n JOIN fitpoints_accounts a ON a.id = n.id WHERE a.kind <> 'wallet')
        OR EXISTS (SELECT 1 FROM new_customers n JOIN challenges c ON c.id = n.id) THEN
        RAISE EXCEPTION 'a customer''s id names a FitPoints account that is not its wallet'
            USING ERRCODE = 'unique_violation', CONSTRAINT = 'fitpoints_wallet_identity';
    END IF;
    INSERT INTO fitpoints_accounts (id, kind) SELECT id, 'wallet' FROM new_customers ORDER BY id ON CONFLICT (id) DO NOTHING;
    RETURN NULL;
END $$;

CREATE FUNCTION fitpoints_challenge_identity() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
    AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM new_challenges n JOIN fitpoints_accounts a ON a.id = n.id)
        OR EXISTS (SELECT 1 FROM new_challenges n JOIN customers c ON c.id = n.id) THEN
        RAISE EXCEPTION 'a challenge''s id names a customer or a FitPoints account'
            USING ERRCODE = 'unique_violation', CONSTRAINT = 'fitpoints_budget_identity';
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER challenges_identity AFTER INSERT ON challenges
    REFERENCING NEW TABLE AS new_challenges FOR EACH STATEMENT EXECUTE FUNCTION fitpoints_challenge_identity();

-- A deployment whose ledger already has a shared id must be looked at by a person before it moves
-- on: the migration stops and says so. Row-level security is forced on the ledger for its owner
-- too, so the check acts for the platform (this transaction only), which sees every row.
SELECT set_config('app.tenant_id', '00000000-0000-0000-0000-000000000000', true);
DO $$
DECLARE
    v_shared bigint;
BEGIN
    SELECT count(*) INTO v_shared FROM customers c JOIN fitpoints_accounts a ON a.id = c.id WHERE a.kind <> 'wallet';
    SELECT v_shared + count(*) INTO v_shared FROM customers c JOIN challenges ch ON ch.id = c.id;
    IF v_shared > 0 THEN
        RAISE EXCEPTION '% customer(s) share an id with a FitPoints platform account or a challenge; resolve them before migrating', v_shared;
    END IF;
END $$;

-- One reward per challenge and wallet.
ALTER TABLE fitpoints_transfers ADD CONSTRAINT fitpoints_reward_names_challenge CHECK (kind <> 'challenge_reward' OR challenge_id IS NOT NULL);
CREATE UNIQUE INDEX fitpoints_transfers_reward_once ON fitpoints_transfers (challenge_id, credit_account) WHERE kind = 'challenge_reward';
