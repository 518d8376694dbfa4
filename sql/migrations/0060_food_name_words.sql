-- The search by name, bounded: an index of the live foods' names by word. A search reads the bucket
-- of its rarest word in name order and checks the other words against each food's words, so a page
-- of 20 costs that bucket at most (usually 20 rows), however many foods hold a common word. A word
-- is a run of letters and digits of the lower-cased name (`name_words`, the one definition the
-- search applies to the typed text too).
CREATE FUNCTION name_words(p_text text) RETURNS SETOF text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT DISTINCT w FROM regexp_split_to_table(lower(p_text), '[^[:alnum:]]+') w WHERE w <> '' $$;

CREATE TABLE food_name_words (
    word text NOT NULL,
    -- The live name in lower case: the bucket's order (and the search's cursor).
    name text NOT NULL,
    food_id uuid NOT NULL REFERENCES foods (id) ON DELETE CASCADE,
    PRIMARY KEY (word, name, food_id)
);
-- Whether a food's live name has a word (the other words of a search).
CREATE INDEX food_name_words_by_food ON food_name_words (food_id, word);

ALTER TABLE food_name_words ENABLE ROW LEVEL SECURITY;
ALTER TABLE food_name_words FORCE ROW LEVEL SECURITY;
CREATE POLICY food_name_words_platform_only ON food_name_words
    USING (app_is_platform()) WITH CHECK (app_is_platform());
GRANT SELECT, INSERT, DELETE ON food_name_words TO backoffice_app;

-- Keeps the words of the foods a statement inserted or changed: those of its live version while it
-- is live and not archived, none otherwise (one pass over the statement's rows: an import's approval
-- of 100,000 foods is one delete and one insert).
CREATE FUNCTION food_name_words_refresh() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    DELETE FROM food_name_words w USING changed c WHERE w.food_id = c.id;
    INSERT INTO food_name_words (word, name, food_id)
    SELECT n.word, lower(v.name), c.id
    FROM changed c JOIN food_versions v ON v.food_id = c.id AND v.version = c.live_version
    CROSS JOIN LATERAL name_words(v.name) n(word)
    WHERE c.state <> 'archived';
    RETURN NULL;
END
$$;
CREATE TRIGGER foods_name_words_inserted AFTER INSERT ON foods REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION food_name_words_refresh();
CREATE TRIGGER foods_name_words_updated AFTER UPDATE ON foods REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION food_name_words_refresh();

-- The foods live already (the migration acting for the platform, this transaction only).
SELECT set_config('app.tenant_id', '00000000-0000-0000-0000-000000000000', true);
INSERT INTO food_name_words (word, name, food_id)
SELECT n.word, lower(v.name), f.id
FROM foods f JOIN food_versions v ON v.food_id = f.id AND v.version = f.live_version
CROSS JOIN LATERAL name_words(v.name) n(word)
WHERE f.state <> 'archived';
