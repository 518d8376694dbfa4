-- A customer's subscriptions, invoices and invoice refunds are accounting records: erasing the
-- account (`maintenance purge`, `accounts erase`) keeps them by id, as orders are kept. Their
-- foreign keys to `customers` refused that erasure (orders never had one), so they go; a customer
-- is erased only once no subscription of theirs is live (the erasure checks).
ALTER TABLE subscriptions DROP CONSTRAINT subscriptions_customer_id_fkey;
ALTER TABLE invoices DROP CONSTRAINT invoices_customer_id_fkey;
ALTER TABLE invoice_refunds DROP CONSTRAINT invoice_refunds_customer_id_fkey;
