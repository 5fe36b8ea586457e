-- assay ledger schema, version 2 (SQLite).
CREATE TABLE IF NOT EXISTS ledger_meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;

-- Every version of every record; append-only. Keyed by ledger revision, so
-- each write appends to the end of the table, and the ledger's revision is
-- the highest key (one index seek; no head row to update on every write).
-- (id, revision) is a unique index.
CREATE TABLE IF NOT EXISTS record_versions (
    ledger_revision INTEGER PRIMARY KEY,
    id              TEXT NOT NULL,
    revision        INTEGER NOT NULL,
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
    request_id      TEXT
);
CREATE UNIQUE INDEX IF NOT EXISTS record_versions_id ON record_versions (id, revision);

-- The current version of each record. An id starts with its kind, so the
-- records of one kind are a range of the primary key: no (kind, scope) index
-- to update on every write.
CREATE TABLE IF NOT EXISTS records (
    id              TEXT PRIMARY KEY,
    revision        INTEGER NOT NULL,
    kind            TEXT NOT NULL,
    scope           TEXT NOT NULL,
    status          TEXT NOT NULL,
    ledger_revision INTEGER NOT NULL
) WITHOUT ROWID;

-- The links of each current version, for link queries.
CREATE TABLE IF NOT EXISTS record_links (
    id     TEXT NOT NULL,
    rel    TEXT NOT NULL,
    target TEXT NOT NULL,
    PRIMARY KEY (id, rel, target)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS record_links_target ON record_links (target, rel);

CREATE TABLE IF NOT EXISTS requests (
    request_id      TEXT PRIMARY KEY,
    body_sha256     TEXT NOT NULL,
    id              TEXT NOT NULL,
    revision        INTEGER NOT NULL,
    ledger_revision INTEGER NOT NULL,
    data_sha256     TEXT NOT NULL
) WITHOUT ROWID;
