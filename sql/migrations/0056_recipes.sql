-- Recipes by the nutrition experts, reviewed as articles are. A version holds its steps (Markdown
-- and the sanitised HTML), servings, tags, and its figures per serving computed when it was saved
-- from the live versions of the food database's entries it uses (never typed), with the allergens
-- those entries name. Each ingredient keeps the food version it was computed from.
CREATE TABLE recipes (
    id uuid PRIMARY KEY,
    author_id uuid NOT NULL REFERENCES operators (id),
    state text NOT NULL CHECK (state IN ('draft', 'in_review', 'published', 'archived')),
    version integer NOT NULL CHECK (version >= 1),
    live_version integer CHECK (live_version BETWEEN 1 AND version),
    review_comment text CHECK (length(review_comment) BETWEEN 1 AND 2000),
    reviewed_by uuid,
    reviewed_at timestamptz,
    submitted_at timestamptz,
    first_published_at timestamptz,
    live_at timestamptz,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    updated_by uuid NOT NULL,
    CHECK (state <> 'published' OR live_version = version),
    CHECK ((live_version IS NULL) = (first_published_at IS NULL))
);

CREATE TABLE recipe_versions (
    recipe_id uuid NOT NULL REFERENCES recipes (id),
    version integer NOT NULL CHECK (version >= 1),
    title text NOT NULL CHECK (length(title) BETWEEN 1 AND 200),
    summary text NOT NULL CHECK (length(summary) BETWEEN 1 AND 500),
    body text NOT NULL CHECK (length(body) BETWEEN 1 AND 100000),
    html text NOT NULL,
    servings integer NOT NULL CHECK (servings BETWEEN 1 AND 50),
    tags text[] NOT NULL DEFAULT '{}',
    cover_url text CHECK (cover_url ~ '^https://'),
    premium boolean NOT NULL,
    allergens text[] NOT NULL DEFAULT '{}',
    -- per serving; a nutrient some ingredient does not know is NULL (incomplete, never low)
    energy_kcal double precision NOT NULL CHECK (energy_kcal >= 0),
    fat double precision CHECK (fat >= 0),
    saturated_fat double precision CHECK (saturated_fat >= 0),
    carbohydrates double precision CHECK (carbohydrates >= 0),
    sugars double precision CHECK (sugars >= 0),
    fiber double precision CHECK (fiber >= 0),
    proteins double precision CHECK (proteins >= 0),
    salt double precision CHECK (salt >= 0),
    grams double precision NOT NULL CHECK (grams > 0),
    written_by uuid NOT NULL,
    written_at timestamptz NOT NULL,
    PRIMARY KEY (recipe_id, version)
);

CREATE TABLE recipe_ingredients (
    recipe_id uuid NOT NULL,
    version integer NOT NULL,
    position integer NOT NULL CHECK (position BETWEEN 1 AND 100),
    food_id uuid NOT NULL REFERENCES foods (id),
    food_version integer NOT NULL,
    name text NOT NULL,
    quantity double precision NOT NULL CHECK (quantity > 0 AND quantity <= 100000),
    unit text NOT NULL CHECK (unit ~ '^[a-z]{1,20}$'),
    grams double precision NOT NULL CHECK (grams > 0),
    PRIMARY KEY (recipe_id, version, position),
    FOREIGN KEY (recipe_id, version) REFERENCES recipe_versions (recipe_id, version),
    FOREIGN KEY (food_id, food_version) REFERENCES food_versions (food_id, version)
);

CREATE INDEX recipes_live ON recipes (first_published_at DESC, id DESC)
    WHERE live_version IS NOT NULL AND state <> 'archived';
CREATE INDEX recipes_by_change ON recipes (updated_at DESC, id DESC);
CREATE INDEX recipes_in_review ON recipes (submitted_at, id) WHERE state = 'in_review';
CREATE INDEX recipes_by_author ON recipes (author_id, updated_at DESC);
CREATE INDEX recipe_ingredients_food ON recipe_ingredients (food_id);

ALTER TABLE recipes ENABLE ROW LEVEL SECURITY;
ALTER TABLE recipes FORCE ROW LEVEL SECURITY;
CREATE POLICY recipes_platform_only ON recipes USING (app_is_platform()) WITH CHECK (app_is_platform());
GRANT SELECT, INSERT, UPDATE ON recipes TO backoffice_app;

ALTER TABLE recipe_versions ENABLE ROW LEVEL SECURITY;
ALTER TABLE recipe_versions FORCE ROW LEVEL SECURITY;
CREATE POLICY recipe_versions_platform_only ON recipe_versions USING (app_is_platform()) WITH CHECK (app_is_platform());
GRANT SELECT, INSERT ON recipe_versions TO backoffice_app;

ALTER TABLE recipe_ingredients ENABLE ROW LEVEL SECURITY;
ALTER TABLE recipe_ingredients FORCE ROW LEVEL SECURITY;
CREATE POLICY recipe_ingredients_platform_only ON recipe_ingredients
    USING (app_is_platform()) WITH CHECK (app_is_platform());
GRANT SELECT, INSERT ON recipe_ingredients TO backoffice_app;
