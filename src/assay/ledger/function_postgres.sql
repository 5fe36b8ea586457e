-- assay_write_lock: the ledger's single write lock, held until the
-- transaction ends. A transaction advisory lock keyed by this schema's
-- record_versions table: it serialises every write of this ledger (and no
-- other) without writing a row, so taking it costs no WAL.
CREATE OR REPLACE FUNCTION assay_write_lock() RETURNS void
LANGUAGE sql AS $fn$
    SELECT pg_advisory_xact_lock(1634956130, 'record_versions'::regclass::oid::int)
$fn$;

-- assay_check_basis: the write basis against the writer's view (its own
-- private partition first, then the project's); a change raises AS002, another
-- ledger's epoch AS003. Called under the write lock.
CREATE OR REPLACE FUNCTION assay_check_basis(
    p_basis_epoch text, p_basis text, p_basis_ledger_revision bigint, p_own text
) RETURNS void
LANGUAGE plpgsql AS $fn$
DECLARE
    v_epoch text;
    v_current bigint;
    v_current_ledger_revision bigint;
    v_basis record;
BEGIN
    SELECT m.value INTO v_epoch FROM ledger_meta m WHERE m.key = 'epoch';
    IF v_epoch <> p_basis_epoch THEN
        RAISE EXCEPTION USING ERRCODE = 'AS003', MESSAGE = json_build_object(
            'expected_epoch', p_basis_epoch, 'epoch', v_epoch)::text;
    END IF;
    FOR v_basis IN SELECT b.key, b.value::bigint AS expected
                   FROM jsonb_each_text(p_basis::jsonb) b ORDER BY b.key COLLATE "C" LOOP
        v_current := 0;
        v_current_ledger_revision := 0;
        SELECT v.revision, v.ledger_revision INTO v_current, v_current_ledger_revision
            FROM record_versions v
            WHERE v.id = v_basis.key AND v.audience IN ('project', p_own)
            ORDER BY CASE WHEN v.audience = 'project' THEN 1 ELSE 0 END, v.revision DESC
            LIMIT 1;
        IF NOT FOUND THEN
            v_current := 0;
            v_current_ledger_revision := 0;
        END IF;
        IF v_current <> v_basis.expected
           OR (0 < p_basis_ledger_revision AND p_basis_ledger_revision < v_current_ledger_revision) THEN
            RAISE EXCEPTION USING ERRCODE = 'AS002', MESSAGE = json_build_object(
                'id', v_basis.key, 'current_revision', v_current,
                'expected', v_basis.expected, 'basis', true)::text;
        END IF;
    END LOOP;
END
$fn$;

-- assay_append: one write's version, under the write lock. Under the lock,
-- each statement's snapshot sees every earlier write: the next ledger
-- revision is the highest stored one plus one, and the record's next revision
-- its partition's highest plus one. A failed expectation raises AS002 (with
-- the write's place in its batch, p_index), which rolls the version back; then
-- the link index and the request id.
CREATE OR REPLACE FUNCTION assay_append(
    p_index integer, p_id text, p_kind text, p_scope text, p_data text, p_data_sha256 text,
    p_status text, p_superseded_by text, p_links text, p_audience text, p_sources text,
    p_origin text, p_request_id text, p_body_sha256 text, p_expect bigint, p_now text,
    p_principal text, OUT o_revision bigint, OUT o_ledger_revision bigint)
LANGUAGE plpgsql AS $fn$
BEGIN
    INSERT INTO record_versions (ledger_revision, id, revision, kind, scope, data, data_sha256,
        status, superseded_by, links, audience, sources, origin, created_at, request_id)
        SELECT (SELECT coalesce(max(v.ledger_revision), 0) + 1 FROM record_versions v), p_id,
            (SELECT coalesce(max(v.revision), 0) + 1 FROM record_versions v
             WHERE v.id = p_id AND v.audience = p_audience),
            p_kind, p_scope, p_data, p_data_sha256, p_status, p_superseded_by, p_links,
            p_audience, p_sources, p_origin, p_now, p_request_id
        RETURNING revision, ledger_revision INTO o_revision, o_ledger_revision;
    IF p_expect IS NOT NULL AND p_expect <> o_revision - 1 THEN
        RAISE EXCEPTION USING ERRCODE = 'AS002', MESSAGE = json_build_object(
            'id', p_id, 'current_revision', o_revision - 1, 'expected', p_expect,
            'basis', false, 'index', p_index)::text;
    END IF;
    IF o_revision > 1 THEN
        DELETE FROM record_links l WHERE l.id = p_id AND l.audience = p_audience;
    END IF;
    IF p_links <> '[]' THEN
        INSERT INTO record_links (id, audience, rel, target)
            SELECT DISTINCT p_id, p_audience, x->>'rel', x->>'target'
            FROM jsonb_array_elements(p_links::jsonb) x;
    END IF;
    IF p_request_id IS NOT NULL THEN
        INSERT INTO requests (principal, request_id, body_sha256, id, audience, revision,
                              ledger_revision, data_sha256)
            VALUES (p_principal, p_request_id, p_body_sha256, p_id, p_audience, o_revision,
                    o_ledger_revision, p_data_sha256);
    END IF;
END
$fn$;

-- assay_put: one guarded write in one round trip (PostgreSQL).
-- It applies exactly the rules of assay.ledger.sql.SqlLedger._commit for a
-- single write (take the write lock, replay or refuse the request id of the
-- writing principal, check the write basis against the writer's view, append
-- the version with the next revisions of its (id, audience) partition, check
-- the expected revision, index links and the request id), and the store
-- conformance suite holds both paths to the same behaviour.
-- p_principal is '' for a handle opened without a principal; its view is the
-- project partition only.
-- Conflicts raise SQLSTATE AS001 (request), AS002 (revision), AS003 (epoch)
-- with a JSON message; raising aborts the call's transaction, so a refused
-- write changes nothing.
CREATE OR REPLACE FUNCTION assay_put(
    p_id text, p_kind text, p_scope text, p_data text, p_data_sha256 text, p_status text,
    p_superseded_by text, p_links text, p_audience text, p_sources text, p_origin text,
    p_request_id text, p_body_sha256 text, p_expect bigint, p_now text,
    p_basis_epoch text, p_basis text, p_basis_ledger_revision bigint, p_principal text
) RETURNS TABLE (o_revision bigint, o_ledger_revision bigint, o_replayed boolean,
                 o_data_sha256 text)
LANGUAGE plpgsql AS $fn$
DECLARE
    v_request record;
    v_written record;
BEGIN
    PERFORM assay_write_lock();
    IF p_request_id IS NOT NULL THEN
        SELECT q.* INTO v_request FROM requests q
            WHERE q.principal = p_principal AND q.request_id = p_request_id;
        IF FOUND THEN
            IF v_request.body_sha256 <> p_body_sha256 THEN
                RAISE EXCEPTION USING ERRCODE = 'AS001', MESSAGE = json_build_object(
                    'request_id', p_request_id, 'id', v_request.id,
                    'revision', v_request.revision)::text;
            END IF;
            RETURN QUERY SELECT v_request.revision, v_request.ledger_revision, true,
                                v_request.data_sha256;
            RETURN;
        END IF;
    END IF;
    IF p_basis_epoch IS NOT NULL THEN
        PERFORM assay_check_basis(p_basis_epoch, p_basis, p_basis_ledger_revision,
            CASE WHEN p_principal = '' THEN 'project' ELSE 'private:' || p_principal END);
    END IF;
    SELECT * INTO v_written FROM assay_append(NULL, p_id, p_kind, p_scope, p_data,
        p_data_sha256, p_status, p_superseded_by, p_links, p_audience, p_sources, p_origin,
        p_request_id, p_body_sha256, p_expect, p_now, p_principal);
    RETURN QUERY SELECT v_written.o_revision, v_written.o_ledger_revision, false, p_data_sha256;
END
$fn$;

-- assay_put_many: a batch in one round trip (PostgreSQL), by the rules of
-- SqlLedger._commit: take the write lock; replay or refuse every request id
-- first; when every write is a replay, answer with the replays alone;
-- otherwise check the write basis once, then append the other writes, in
-- batch order, set-based: one statement appends every version (the ledger
-- revisions follow the batch order; a batch never writes one (id, audience)
-- twice, so each version's revision is its partition's highest plus one),
-- then the first failed expectation in batch order raises AS002, and one
-- statement each re-points the links and records the request ids.
-- p_writes is a JSON array with one array per write:
-- [id, kind, scope, null, data_sha256, status, superseded_by, links, audience,
--  sources, origin, request_id, body_sha256, expect_revision], and p_data the
-- writes' data texts in the same order (an array, sent in binary: the largest
-- field is neither escaped into nor parsed out of JSON). Answers one row
-- per write with its place in the batch (o_index, from 0). Any conflict
-- raises and aborts the call's transaction: nothing of the batch is written.
CREATE OR REPLACE FUNCTION assay_put_many(
    p_writes text, p_data text[], p_now text, p_basis_epoch text, p_basis text,
    p_basis_ledger_revision bigint, p_principal text
) RETURNS TABLE (o_index integer, o_revision bigint, o_ledger_revision bigint,
                 o_replayed boolean, o_data_sha256 text)
LANGUAGE plpgsql AS $fn$
DECLARE
    v_writes jsonb := p_writes::jsonb;
    v_count integer := jsonb_array_length(v_writes);
    v_replayed boolean[] := array_fill(false, ARRAY[v_count]);
    v_replays integer := 0;
    v_base bigint;
    v_request record;
    v_bad record;
    w jsonb;
    i integer;
BEGIN
    PERFORM assay_write_lock();
    FOR i IN 0 .. v_count - 1 LOOP
        w := v_writes->i;
        CONTINUE WHEN w->>11 IS NULL;
        SELECT q.* INTO v_request FROM requests q
            WHERE q.principal = p_principal AND q.request_id = w->>11;
        CONTINUE WHEN NOT FOUND;
        IF v_request.body_sha256 <> w->>12 THEN
            RAISE EXCEPTION USING ERRCODE = 'AS001', MESSAGE = json_build_object(
                'request_id', w->>11, 'id', v_request.id,
                'revision', v_request.revision)::text;
        END IF;
        v_replayed[i + 1] := true;
        v_replays := v_replays + 1;
        RETURN QUERY SELECT i, v_request.revision, v_request.ledger_revision, true,
                            v_request.data_sha256;
    END LOOP;
    IF v_replays = v_count THEN
        RETURN;
    END IF;
    IF p_basis_epoch IS NOT NULL THEN
        PERFORM assay_check_basis(p_basis_epoch, p_basis, p_basis_ledger_revision,
            CASE WHEN p_principal = '' THEN 'project' ELSE 'private:' || p_principal END);
    END IF;
    SELECT coalesce(max(v.ledger_revision), 0) INTO v_base FROM record_versions v;
    RETURN QUERY
    WITH fresh AS (
        SELECT (e.n - 1)::integer AS idx, e.w, row_number() OVER (ORDER BY e.n) AS k
        FROM jsonb_array_elements(v_writes) WITH ORDINALITY e(w, n)
        WHERE NOT v_replayed[e.n]
    ), appended AS (
        INSERT INTO record_versions (ledger_revision, id, revision, kind, scope, data,
            data_sha256, status, superseded_by, links, audience, sources, origin, created_at,
            request_id)
        SELECT v_base + f.k, f.w->>0,
            (SELECT coalesce(max(v.revision), 0) + 1 FROM record_versions v
             WHERE v.id = f.w->>0 AND v.audience = f.w->>8),
            f.w->>1, f.w->>2, p_data[f.idx + 1], f.w->>4, f.w->>5, f.w->>6, f.w->>7, f.w->>8, f.w->>9,
            f.w->>10, p_now, f.w->>11
        FROM fresh f ORDER BY f.k
        RETURNING revision, ledger_revision, data_sha256
    )
    SELECT f.idx, a.revision, a.ledger_revision, false, a.data_sha256
    FROM appended a JOIN fresh f ON a.ledger_revision = v_base + f.k;
    SELECT f.idx, f.w->>0 AS id, v.revision, (f.w->>13)::bigint AS expected INTO v_bad
        FROM (SELECT (e.n - 1)::integer AS idx, e.w FROM jsonb_array_elements(v_writes)
              WITH ORDINALITY e(w, n) WHERE NOT v_replayed[e.n] AND e.w->>13 IS NOT NULL) f
        JOIN record_versions v ON v.ledger_revision > v_base AND v.id = f.w->>0
                               AND v.audience = f.w->>8
        WHERE (f.w->>13)::bigint <> v.revision - 1
        ORDER BY f.idx LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'AS002', MESSAGE = json_build_object(
            'id', v_bad.id, 'current_revision', v_bad.revision - 1, 'expected', v_bad.expected,
            'basis', false, 'index', v_bad.idx)::text;
    END IF;
    DELETE FROM record_links l USING record_versions v
        WHERE v.ledger_revision > v_base AND v.revision > 1
          AND l.id = v.id AND l.audience = v.audience;
    INSERT INTO record_links (id, audience, rel, target)
        SELECT DISTINCT v.id, v.audience, x->>'rel', x->>'target'
        FROM record_versions v, jsonb_array_elements(v.links::jsonb) x
        WHERE v.ledger_revision > v_base AND v.links <> '[]';
    INSERT INTO requests (principal, request_id, body_sha256, id, audience, revision,
                          ledger_revision, data_sha256)
        SELECT p_principal, v.request_id, e.w->>12, v.id, v.audience, v.revision,
               v.ledger_revision, v.data_sha256
        FROM record_versions v
        JOIN jsonb_array_elements(v_writes) WITH ORDINALITY e(w, n)
          ON e.w->>0 = v.id AND e.w->>8 = v.audience AND NOT v_replayed[e.n]
        WHERE v.ledger_revision > v_base AND v.request_id IS NOT NULL;
END
$fn$;
