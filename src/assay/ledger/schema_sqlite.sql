-- assay ledger schema, version 1 (SQLite).
CREATE TABLE IF NOT EXISTS ledger_meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS ledger_head (
    one      INTEGER PRIMARY KEY CHECK (one = 1),
    revision INTEGER NOT NULL
);

-- Every version of every record; append-only. Keyed by ledger revision, so
-- each write appends to the end of the table; (id, revision) is an index.
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

-- The current version of each record.
CREATE TABLE IF NOT EXISTS records (
    id              TEXT PRIMARY KEY,
    revision        INTEGER NOT NULL,
    kind            TEXT NOT NULL,
    scope           TEXT NOT NULL,
    status          TEXT NOT NULL,
    ledger_revision INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS records_kind_scope ON records (kind, scope);

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
