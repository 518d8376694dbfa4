-- The FitPoints write path under concurrent activity batches.
--
-- Every customer has a wallet from the moment the customer exists.
--
-- Wallets used to be opened by the first movement that needed one (INSERT … ON CONFLICT DO
-- NOTHING). A unique check against a wallet another transaction had just inserted waits for that
-- whole transaction, so concurrent activity batches naming the same new customers ran one at a
-- time (measured: two thirds of the ingestion benchmark's database time was spent waiting there).
-- Opening the wallet in the statement that inserts the customer takes that wait off every
-- movement: a movement only ever updates wallets that exist.

CREATE FUNCTION fitpoints_open_customer_wallets() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
    AS $$
BEGIN
    INSERT INTO fitpoints_accounts (id, kind) SELECT id, 'wallet' FROM new_customers ORDER BY id ON CONFLICT (id) DO NOTHING;
    RETURN NULL;
END $$;
CREATE TRIGGER customers_open_wallets AFTER INSERT ON customers
    REFERENCING NEW TABLE AS new_customers FOR EACH STATEMENT EXECUTE FUNCTION fitpoints_open_customer_wallets();

-- The customers that exist already.
INSERT INTO fitpoints_accounts (id, kind) SELECT id, 'wallet' FROM customers ORDER BY id ON CONFLICT (id) DO NOTHING;

-- Rows that every activity batch rewrites (wallet totals, a day's earnings per rule) leave room on
-- their page for the new version, so the update is a heap-only tuple and no index changes.
ALTER TABLE fitpoints_accounts SET (fillfactor = 80);
ALTER TABLE fitpoints_daily_earnings SET (fillfactor = 80);

-- Earnings are most transfers, and every one of them debits the issuance account: an index of
-- debits need not list them (a wallet is never debited by an earning, and the platform accounts'
-- totals are sums over the whole table). No query looks transfers up by movement.
DROP INDEX fitpoints_transfers_debit;
CREATE INDEX fitpoints_transfers_debit ON fitpoints_transfers (debit_account, id) WHERE kind <> 'earning';
DROP INDEX fitpoints_transfers_movement;
