-- assay ledger schema, version 7 (PostgreSQL; the text index of version 7 is made by
-- assay.ledger.postgres, as it needs the pg_trgm extension).
CREATE TABLE IF NOT EXISTS ledger_meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

-- Every version of every record; append-only, and the only copy of a record.
-- Keyed by ledger revision, so each write appends to the end of the table
-- and the ledger's revision is the highest key. A record is identified by its
-- id and its audience ('project', or 'private:<principal>': each principal's
-- private records are a partition of their own). Its current version is its
-- highest revision in the unique (id, audience, revision) index, and the ids
-- of one kind are a range of that index (an id starts with "<kind>:"). A
-- write therefore touches the table and one index, and updates no counter or
-- head row.
-- Ids compare bytewise (COLLATE "C"), as on SQLite, whatever the database's
-- collation: the kind range and the order of find results are the same on
-- both backends.
CREATE TABLE IF NOT EXISTS record_versions (
    ledger_revision BIGINT PRIMARY KEY,
    id              TEXT COLLATE "C" NOT NULL,
    revision        BIGINT NOT NULL,
    kind            TEXT NOT NULL,
    scope           TEXT NOT NULL,
    data            TEXT NOT NULL,
    data_sha256     TEXT NOT NULL,
    status          TEXT NOT NULL,
    superseded_by   TEXT,
    links           TEXT NOT NULL,
    audience        TEXT NOT NULL,
    sources         TEXT NOT NULL,
    origin          TEXT NOT NULL,
    created_at      TEXT NOT NULL,
    request_id      TEXT,
    -- The version's seal over every column above but data (assay.ledger.record.version_digest)
    -- and the hash chain over ledger revision order; a direct edit of a column
    -- breaks the first, a resealed edit the second (docs/ledger.md, "Tamper evidence").
    version_sha256  TEXT,
    chain_sha256    TEXT,
    -- The database role that wrote the version (session_user: the role that
    -- authenticated, even inside the SECURITY DEFINER write functions); NULL
    -- for versions written before schema 5 recorded it.
    written_by      TEXT DEFAULT session_user
);
CREATE UNIQUE INDEX IF NOT EXISTS record_versions_id ON record_versions (id, audience, revision);

-- The links of each record's current version, for link queries.
CREATE TABLE IF NOT EXISTS record_links (
    id       TEXT COLLATE "C" NOT NULL,
    audience TEXT NOT NULL,
    rel      TEXT NOT NULL,
    target   TEXT NOT NULL,
    PRIMARY KEY (id, audience, rel, target)
);
CREATE INDEX IF NOT EXISTS record_links_target ON record_links (target, rel);

-- The indexed data fields (assay.ledger.record.DATA_KEYS) of every version,
-- for the reads that name records by one of them (a goal's todos,
-- orientation records, a decision stream): a read joins each row to its
-- version and keeps the current ones. Appended in the same transaction as
-- the version, never updated, like the versions themselves. value is as
-- assay.ledger.record.key_value stores it; audience is the version's (so a
-- row-level policy on audience can cover this table as it covers versions).
CREATE TABLE IF NOT EXISTS record_keys (
    field           TEXT NOT NULL,
    value           TEXT NOT NULL,
    ledger_revision BIGINT NOT NULL,
    audience        TEXT NOT NULL,
    PRIMARY KEY (field, value, ledger_revision)
);

-- Request ids belong to the principal that used them ('' for a handle
-- opened without one).
CREATE TABLE IF NOT EXISTS requests (
    principal       TEXT NOT NULL,
    request_id      TEXT NOT NULL,
    body_sha256     TEXT NOT NULL,
    id              TEXT NOT NULL,
    audience        TEXT NOT NULL,
    revision        BIGINT NOT NULL,
    ledger_revision BIGINT NOT NULL,
    data_sha256     TEXT NOT NULL,
    PRIMARY KEY (principal, request_id)
);

