-- The catalogs' featured lists: a recommendation may feature up to ten pieces of the experts'
-- content (a workout video, a recipe, an article), in order, each named `kind:id`. The featured
-- content reaches the customers the recommendation's audience rule selects (subscription state and
-- the health parts, matched inside the database as for the recommendation itself), so the app's
-- "featured for you" is catered as its recommendations are. The app's feed names each featured
-- piece that is live at the read (an archived one drops out); a piece must be live when featured.
ALTER TABLE recommendations
    ADD COLUMN featured text[] NOT NULL DEFAULT '{}'
        CHECK (cardinality(featured) <= 10
            AND array_to_string(featured, ' ') ~ '^((video|recipe|article):[0-9a-f-]{36}( |$))*$');

-- The live title of a featured piece (`video:…`, `recipe:…`, `article:…`), NULL when it is not live.
CREATE FUNCTION featured_title(p_item text) RETURNS text
    LANGUAGE sql STABLE
    AS $$
    SELECT CASE split_part(p_item, ':', 1)
        WHEN 'video' THEN (SELECT v.title FROM videos w JOIN video_versions v
            ON v.video_id = w.id AND v.version = w.live_version
            WHERE w.id = split_part(p_item, ':', 2)::uuid AND w.state <> 'archived')
        WHEN 'recipe' THEN (SELECT v.title FROM recipes r JOIN recipe_versions v
            ON v.recipe_id = r.id AND v.version = r.live_version
            WHERE r.id = split_part(p_item, ':', 2)::uuid AND r.state <> 'archived')
        WHEN 'article' THEN (SELECT v.title FROM articles a JOIN article_versions v
            ON v.article_id = a.id AND v.version = a.live_version
            WHERE a.id = split_part(p_item, ':', 2)::uuid AND a.state <> 'archived')
    END
    $$;
