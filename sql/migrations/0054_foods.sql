-- The food database: products with their barcode (a GTIN in its 14-digit form) and plain foods
-- without one, each with versions of its figures per 100 g, reviewed as articles are. A barcode
-- names one food not archived. The app reads live versions: by barcode (one index, then the
-- version's key) and by name (a trigram index over the versions' names).
CREATE TABLE food_imports (
    id uuid PRIMARY KEY,
    sha256 text NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
    foods integer NOT NULL CHECK (foods >= 1),
    imported_by uuid NOT NULL REFERENCES operators (id),
    imported_at timestamptz NOT NULL,
    approved_by uuid REFERENCES operators (id),
    approved_at timestamptz,
    CHECK ((approved_by IS NULL) = (approved_at IS NULL))
);

CREATE TABLE foods (
    id uuid PRIMARY KEY,
    gtin text CHECK (gtin ~ '^[0-9]{14}$'),
    author_id uuid NOT NULL REFERENCES operators (id),
    import_id uuid REFERENCES food_imports (id),
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

CREATE TABLE food_versions (
    food_id uuid NOT NULL REFERENCES foods (id),
    version integer NOT NULL CHECK (version >= 1),
    name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    brand text CHECK (length(brand) BETWEEN 1 AND 120),
    serving_grams double precision CHECK (serving_grams > 0 AND serving_grams <= 5000),
    energy_kcal double precision NOT NULL CHECK (energy_kcal BETWEEN 0 AND 900),
    fat double precision CHECK (fat BETWEEN 0 AND 100),
    saturated_fat double precision CHECK (saturated_fat BETWEEN 0 AND 100 AND saturated_fat <= fat),
    carbohydrates double precision CHECK (carbohydrates BETWEEN 0 AND 100),
    sugars double precision CHECK (sugars BETWEEN 0 AND 100 AND sugars <= carbohydrates),
    fiber double precision CHECK (fiber BETWEEN 0 AND 100),
    proteins double precision CHECK (proteins BETWEEN 0 AND 100),
    salt double precision CHECK (salt BETWEEN 0 AND 100),
    allergens text[] NOT NULL DEFAULT '{}',
    written_by uuid NOT NULL,
    written_at timestamptz NOT NULL,
    PRIMARY KEY (food_id, version)
);

-- One food not archived per barcode (an archived one keeps its barcode for the record).
CREATE UNIQUE INDEX foods_gtin ON foods (gtin) WHERE state <> 'archived';
-- The consoles' lists, the review queue, an import's foods.
CREATE INDEX foods_by_change ON foods (updated_at DESC, id DESC);
CREATE INDEX foods_in_review ON foods (submitted_at, id) WHERE state = 'in_review';
CREATE INDEX foods_by_author ON foods (author_id, updated_at DESC);
CREATE INDEX foods_by_import ON foods (import_id) WHERE import_id IS NOT NULL;
-- The app's reads by name: in order (a page of the database), and holding a text (a trigram index);
-- both over every version's name, the live ones kept by the join.
CREATE INDEX food_versions_by_name ON food_versions (lower(name), food_id);
CREATE INDEX food_versions_name_search ON food_versions USING gin (lower(name) gin_trgm_ops);

ALTER TABLE food_imports ENABLE ROW LEVEL SECURITY;
ALTER TABLE food_imports FORCE ROW LEVEL SECURITY;
CREATE POLICY food_imports_platform_only ON food_imports USING (app_is_platform()) WITH CHECK (app_is_platform());
GRANT SELECT, INSERT, UPDATE ON food_imports TO backoffice_app;

ALTER TABLE foods ENABLE ROW LEVEL SECURITY;
ALTER TABLE foods FORCE ROW LEVEL SECURITY;
CREATE POLICY foods_platform_only ON foods USING (app_is_platform()) WITH CHECK (app_is_platform());
GRANT SELECT, INSERT, UPDATE ON foods TO backoffice_app;

ALTER TABLE food_versions ENABLE ROW LEVEL SECURITY;
ALTER TABLE food_versions FORCE ROW LEVEL SECURITY;
CREATE POLICY food_versions_platform_only ON food_versions USING (app_is_platform()) WITH CHECK (app_is_platform());
-- Versions are only ever added.
GRANT SELECT, INSERT ON food_versions TO backoffice_app;
