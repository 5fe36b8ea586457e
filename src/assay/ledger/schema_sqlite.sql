-- assay ledger schema, version 7 (SQLite; version 5 changed only PostgreSQL).
CREATE TABLE IF NOT EXISTS ledger_meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;

-- Every version of every record; append-only, and the only copy of a record.
-- Keyed by ledger revision, so each write appends to the end of the table
-- and the ledger's revision is the highest key. A record is identified by its
-- id and its audience ('project', or 'private:<principal>': each principal's
-- private records are a partition of their own). Its current version is its
-- highest revision in the unique (id, audience, revision) index, and the ids
-- of one kind are a range of that index (an id starts with "<kind>:"). A
-- write therefore touches the table and one index, and updates no counter or
-- head row.
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
    request_id      TEXT,
    -- The version's seal over every column above but data (assay.ledger.record.version_digest)
    -- and the hash chain over ledger revision order; a direct edit of a column
    -- breaks the first, a resealed edit the second (docs/ledger.md, "Tamper evidence").
    version_sha256  TEXT,
    chain_sha256    TEXT
);
CREATE UNIQUE INDEX IF NOT EXISTS record_versions_id ON record_versions (id, audience, revision);

-- The links of each record's current version, for link queries.
CREATE TABLE IF NOT EXISTS record_links (
    id       TEXT NOT NULL,
    audience TEXT NOT NULL,
    rel      TEXT NOT NULL,
    target   TEXT NOT NULL,
    PRIMARY KEY (id, audience, rel, target)
) WITHOUT ROWID;
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
    ledger_revision INTEGER NOT NULL,
    audience        TEXT NOT NULL,
    PRIMARY KEY (field, value, ledger_revision)
) WITHOUT ROWID;

-- The text index of find's query: every version's id and data, as trigrams
-- (FTS5's trigram tokenizer, folding case). It holds no copy of the text
-- (content is record_versions) and is kept by the triggers below in the
-- statement that appends, edits or removes a version, so it always indexes
-- exactly the stored rows, a direct edit of one included. A query reads its
-- candidates here and keeps those the exact condition of the scan matches
-- (assay.ledger.sql.text_match), so both return the same rows.
CREATE VIRTUAL TABLE IF NOT EXISTS record_text USING fts5(
    id, data, content = 'record_versions', content_rowid = 'ledger_revision',
    tokenize = 'trigram case_sensitive 0', columnsize = 0
);
-- FTS5 reads a value only up to its first NUL byte: the versions whose id or
-- data holds one (only a damaged row does; canonical JSON and ids never) are
-- listed here and are candidates of every indexed query.
CREATE TABLE IF NOT EXISTS record_text_nul (
    ledger_revision INTEGER PRIMARY KEY
);
CREATE TRIGGER IF NOT EXISTS record_text_insert AFTER INSERT ON record_versions BEGIN
    INSERT INTO record_text (rowid, id, data) VALUES (new.ledger_revision, new.id, new.data);
    INSERT OR IGNORE INTO record_text_nul (ledger_revision) SELECT new.ledger_revision
        WHERE instr(CAST(new.id AS BLOB), x'00') > 0 OR instr(CAST(new.data AS BLOB), x'00') > 0;
END;
CREATE TRIGGER IF NOT EXISTS record_text_update AFTER UPDATE OF ledger_revision, id, data
ON record_versions BEGIN
    INSERT INTO record_text (record_text, rowid, id, data)
        VALUES ('delete', old.ledger_revision, old.id, old.data);
    DELETE FROM record_text_nul WHERE ledger_revision = old.ledger_revision;
    INSERT INTO record_text (rowid, id, data) VALUES (new.ledger_revision, new.id, new.data);
    INSERT OR IGNORE INTO record_text_nul (ledger_revision) SELECT new.ledger_revision
        WHERE instr(CAST(new.id AS BLOB), x'00') > 0 OR instr(CAST(new.data AS BLOB), x'00') > 0;
END;
CREATE TRIGGER IF NOT EXISTS record_text_delete AFTER DELETE ON record_versions BEGIN
    INSERT INTO record_text (record_text, rowid, id, data)
        VALUES ('delete', old.ledger_revision, old.id, old.data);
    DELETE FROM record_text_nul WHERE ledger_revision = old.ledger_revision;
END;

-- Request ids belong to the principal that used them ('' for a handle
-- opened without one).
CREATE TABLE IF NOT EXISTS requests (
    principal       TEXT NOT NULL,
    request_id      TEXT NOT NULL,
    body_sha256     TEXT NOT NULL,
    id              TEXT NOT NULL,
    audience        TEXT NOT NULL,
    revision        INTEGER NOT NULL,
    ledger_revision INTEGER NOT NULL,
    data_sha256     TEXT NOT NULL,
    PRIMARY KEY (principal, request_id)
) WITHOUT ROWID;
