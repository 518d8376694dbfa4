-- The orders list's filters: a good's SKU on a line (a shop's lines by SKU, then their orders),
-- and a customer's orders newest first (a platform role's filter; also the purge's and the data
-- export's read by customer, which the index it replaces served).
CREATE INDEX order_lines_by_sku ON order_lines (tenant_id, sku, order_id);
CREATE INDEX orders_by_customer_newest ON orders (customer_id, created_at DESC, id DESC);
DROP INDEX orders_by_customer;
