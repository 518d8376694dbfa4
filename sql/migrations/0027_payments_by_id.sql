-- A payment is found by its id alone when its order's verdict is recorded (checkout's second
-- step, a move's record, reconciliation): the primary key leads with the tenant, which a
-- platform principal (the app's service) does not narrow, so without this index every such
-- lookup read the whole table.
CREATE INDEX payments_id ON payments (id);
