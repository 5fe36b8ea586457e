-- assay_write_lock: the ledger's single write lock, held until the
-- transaction ends. A transaction advisory lock keyed by this schema's
-- record_versions table: it serialises every write of this ledger (and no
-- other) without writing a row, so taking it costs no WAL.
CREATE OR REPLACE FUNCTION assay_write_lock() RETURNS void
LANGUAGE sql AS $fn$
    SELECT pg_advisory_xact_lock(1634956130, 'record_versions'::regclass::oid::int)
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
    v_ledger_revision bigint;
    v_epoch text;
    v_revision bigint;
    v_current bigint;
    v_current_ledger_revision bigint;
    v_request record;
    v_basis record;
    v_own text := CASE WHEN p_principal = '' THEN 'project' ELSE 'private:' || p_principal END;
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
        SELECT m.value INTO v_epoch FROM ledger_meta m WHERE m.key = 'epoch';
        IF v_epoch <> p_basis_epoch THEN
            RAISE EXCEPTION USING ERRCODE = 'AS003', MESSAGE = json_build_object(
                'expected_epoch', p_basis_epoch, 'epoch', v_epoch)::text;
        END IF;
        FOR v_basis IN SELECT b.key, b.value::bigint AS expected
                       FROM jsonb_each_text(p_basis::jsonb) b ORDER BY b.key COLLATE "C" LOOP
            -- The writer's view: its own private partition first, then the project's.
            v_current := 0;
            v_current_ledger_revision := 0;
            SELECT v.revision, v.ledger_revision INTO v_current, v_current_ledger_revision
                FROM record_versions v
                WHERE v.id = v_basis.key AND v.audience IN ('project', v_own)
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
    END IF;
    -- Under the write lock, each statement's snapshot sees every earlier
    -- write: the next ledger revision is the highest stored one plus one, and
    -- the record's next revision its partition's highest plus one. A failed
    -- expectation raises, which rolls the appended version back.
    INSERT INTO record_versions (ledger_revision, id, revision, kind, scope, data, data_sha256,
        status, superseded_by, links, audience, sources, origin, created_at, request_id)
        SELECT (SELECT coalesce(max(v.ledger_revision), 0) + 1 FROM record_versions v), p_id,
            (SELECT coalesce(max(v.revision), 0) + 1 FROM record_versions v
             WHERE v.id = p_id AND v.audience = p_audience),
            p_kind, p_scope, p_data, p_data_sha256, p_status, p_superseded_by, p_links,
            p_audience, p_sources, p_origin, p_now, p_request_id
        RETURNING revision, ledger_revision INTO v_revision, v_ledger_revision;
    IF p_expect IS NOT NULL AND p_expect <> v_revision - 1 THEN
        RAISE EXCEPTION USING ERRCODE = 'AS002', MESSAGE = json_build_object(
            'id', p_id, 'current_revision', v_revision - 1, 'expected', p_expect,
            'basis', false)::text;
    END IF;
    IF v_revision > 1 THEN
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
            VALUES (p_principal, p_request_id, p_body_sha256, p_id, p_audience, v_revision,
                    v_ledger_revision, p_data_sha256);
    END IF;
    RETURN QUERY SELECT v_revision, v_ledger_revision, false, p_data_sha256;
END
$fn$;
