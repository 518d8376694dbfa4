-- The subscription business by day, for a backend manager's home: subscribers who started paying
-- and who stopped, the change in paying subscribers and in monthly recurring revenue, the renewal
-- charges declined and the revenue recovered by a retry. Kept by the database in the transaction
-- of the change (at its commit), as the shops' figures are; days are UTC, from the change's
-- `updated_at` (the clock of the unit of work that made it).
--
-- Rows hold changes, not totals: paying subscribers and MRR on a day are the sums of the changes up
-- to it. Paying: `active` or `past_due` (access kept while retried). A subscription's monthly
-- revenue is its price, or an annual price divided by 12 (rounded down to the cent). Started: a
-- subscription that becomes paying from none, incomplete or trialing. Churned: one that stops
-- paying (canceled or lapsed from active or past_due). Failed renewals: a renewal invoice's charge
-- answered without payment (a decline). Recovered: a renewal invoice paid at a later attempt.
-- Each row is one of 16 slots by subscription, so concurrent renewals rarely wait on one row.

CREATE TABLE subscription_daily_figures (
    day date NOT NULL,
    slot smallint NOT NULL,
    started bigint NOT NULL DEFAULT 0,
    churned bigint NOT NULL DEFAULT 0,
    paying_change bigint NOT NULL DEFAULT 0,
    mrr_change_cents bigint NOT NULL DEFAULT 0,
    failed_renewals bigint NOT NULL DEFAULT 0,
    recovered_cents bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (day, slot)
);
ALTER TABLE subscription_daily_figures ENABLE ROW LEVEL SECURITY;
ALTER TABLE subscription_daily_figures FORCE ROW LEVEL SECURITY;
CREATE POLICY subscription_daily_figures_platform_only ON subscription_daily_figures USING (app_is_platform()
    OR NOT pg_has_role('backoffice_app', 'USAGE'))
    WITH CHECK (true);
GRANT SELECT ON subscription_daily_figures TO backoffice_app;

CREATE FUNCTION subscription_daily_figures_add(
    p_day date, p_subscription uuid, p_started bigint, p_churned bigint, p_paying bigint, p_mrr bigint,
    p_failed bigint, p_recovered bigint
) RETURNS void
    LANGUAGE sql SECURITY DEFINER
    SET search_path = public, pg_temp
    AS $$
    INSERT INTO subscription_daily_figures AS f
        (day, slot, started, churned, paying_change, mrr_change_cents, failed_renewals, recovered_cents)
    VALUES (p_day, (get_byte(uuid_send(p_subscription), 15) % 16)::smallint, p_started, p_churned, p_paying, p_mrr,
        p_failed, p_recovered)
    ON CONFLICT (day, slot) DO UPDATE SET started = f.started + EXCLUDED.started,
        churned = f.churned + EXCLUDED.churned, paying_change = f.paying_change + EXCLUDED.paying_change,
        mrr_change_cents = f.mrr_change_cents + EXCLUDED.mrr_change_cents,
        failed_renewals = f.failed_renewals + EXCLUDED.failed_renewals,
        recovered_cents = f.recovered_cents + EXCLUDED.recovered_cents
$$;
REVOKE ALL ON FUNCTION subscription_daily_figures_add(date, uuid, bigint, bigint, bigint, bigint, bigint, bigint)
    FROM PUBLIC;

-- A subscription's monthly revenue while paying, else 0.
CREATE FUNCTION subscription_monthly_cents(p_status text, p_price bigint, p_interval text) RETURNS bigint
    LANGUAGE sql IMMUTABLE
    AS $$
    SELECT CASE WHEN p_status NOT IN ('active', 'past_due') THEN 0
        WHEN p_interval = 'year' THEN p_price / 12 ELSE p_price END
$$;

CREATE FUNCTION subscription_daily_figures_follow() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = public, pg_temp
    AS $$
DECLARE
    old_status text := CASE WHEN TG_OP = 'INSERT' THEN 'none' ELSE OLD.status END;
    was_paying boolean := old_status IN ('active', 'past_due');
    is_paying boolean := NEW.status IN ('active', 'past_due');
    mrr bigint := subscription_monthly_cents(NEW.status, NEW.price_cents, NEW.billing_interval)
        - CASE WHEN TG_OP = 'INSERT' THEN 0
            ELSE subscription_monthly_cents(OLD.status, OLD.price_cents, OLD.billing_interval) END;
BEGIN
    IF was_paying = is_paying AND mrr = 0 THEN
        RETURN NULL;
    END IF;
    PERFORM subscription_daily_figures_add((NEW.updated_at AT TIME ZONE 'UTC')::date, NEW.id,
        (is_paying AND old_status IN ('none', 'incomplete', 'trialing'))::int,
        (was_paying AND NEW.status IN ('canceled', 'lapsed'))::int,
        is_paying::int - was_paying::int, mrr, 0, 0);
    RETURN NULL;
END
$$;
CREATE CONSTRAINT TRIGGER subscription_daily_figures_follow
    AFTER INSERT OR UPDATE OF status, price_cents, billing_interval ON subscriptions
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION subscription_daily_figures_follow();

-- A renewal invoice's charge answered: declined (its claim released, not paid), or paid at a later
-- attempt than the first.
CREATE FUNCTION invoice_daily_figures_follow() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = public, pg_temp
    AS $$
BEGIN
    IF NEW.kind <> 'renewal' THEN
        RETURN NULL;
    END IF;
    IF OLD.charging AND NOT NEW.charging AND NEW.status IN ('open', 'failed') THEN
        PERFORM subscription_daily_figures_add((NEW.updated_at AT TIME ZONE 'UTC')::date, NEW.subscription_id,
            0, 0, 0, 0, 1, 0);
    ELSIF NEW.status = 'paid' AND OLD.status <> 'paid' AND NEW.attempts > 1 THEN
        PERFORM subscription_daily_figures_add((NEW.updated_at AT TIME ZONE 'UTC')::date, NEW.subscription_id,
            0, 0, 0, 0, 0, NEW.amount_cents);
    END IF;
    RETURN NULL;
END
$$;
CREATE CONSTRAINT TRIGGER invoice_daily_figures_follow AFTER UPDATE OF status, charging ON invoices
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION invoice_daily_figures_follow();

-- The subscriptions already recorded: each paying one counted in on the day it was created (its
-- earlier history is not in the records, so the days before this migration start from there).
SELECT set_config('app.tenant_id', '00000000-0000-0000-0000-000000000000', true);
INSERT INTO subscription_daily_figures (day, slot, started, paying_change, mrr_change_cents)
SELECT (created_at AT TIME ZONE 'UTC')::date, (get_byte(uuid_send(id), 15) % 16)::smallint, count(*), count(*),
    sum(subscription_monthly_cents(status, price_cents, billing_interval))
FROM subscriptions WHERE status IN ('active', 'past_due') GROUP BY 1, 2;
