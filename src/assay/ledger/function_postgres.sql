-- assay_write_lock: the ledger's single write lock, held until the
-- transaction ends. A transaction advisory lock keyed by this schema's
-- record_versions table: it serialises every write of this ledger (and no
-- other) without writing a row, so taking it writes no WAL.
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

-- assay_version_digest: a version's seal, version_sha256 (see
-- assay.ledger.record.version_digest, which builds the same text): SHA-256 of
-- the RFC 8785 text of the object of its stored fields but the data, keys in
-- order, every value a JSON string (to_json escapes exactly as RFC 8785 does),
-- integer or null.
CREATE OR REPLACE FUNCTION assay_version_digest(
    p_id text, p_kind text, p_scope text, p_revision bigint, p_data_sha256 text, p_status text,
    p_superseded_by text, p_links text, p_audience text, p_sources text, p_created_at text,
    p_ledger_revision bigint, p_request_id text, p_origin text
) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$
    SELECT encode(sha256(convert_to(
        '{"audience":' || coalesce(to_json(p_audience)::text, 'null')
        || ',"created_at":' || coalesce(to_json(p_created_at)::text, 'null')
        || ',"data_sha256":' || coalesce(to_json(p_data_sha256)::text, 'null')
        || ',"id":' || coalesce(to_json(p_id)::text, 'null')
        || ',"kind":' || coalesce(to_json(p_kind)::text, 'null')
        || ',"ledger_revision":' || coalesce(p_ledger_revision::text, 'null')
        || ',"links":' || coalesce(to_json(p_links)::text, 'null')
        || ',"origin":' || coalesce(to_json(p_origin)::text, 'null')
        || ',"request_id":' || coalesce(to_json(p_request_id)::text, 'null')
        || ',"revision":' || coalesce(p_revision::text, 'null')
        || ',"scope":' || coalesce(to_json(p_scope)::text, 'null')
        || ',"sources":' || coalesce(to_json(p_sources)::text, 'null')
        || ',"status":' || coalesce(to_json(p_status)::text, 'null')
        || ',"superseded_by":' || coalesce(to_json(p_superseded_by)::text, 'null')
        || '}', 'UTF8')), 'hex')
$fn$;

-- assay_chain_digest: a version's chain_sha256 from the previous version's
-- and its own seal (assay.ledger.record.chain_digest).
CREATE OR REPLACE FUNCTION assay_chain_digest(p_previous text, p_version_sha256 text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$
    SELECT encode(sha256(convert_to(p_previous || p_version_sha256, 'UTF8')), 'hex')
$fn$;

-- assay_seal_version: every appended version is sealed by the server, whoever
-- inserts it: its version_sha256, and its chain_sha256 continuing the version
-- stored before it (under the write lock, the highest ledger revision below
-- it; a batch appends in ledger revision order, and each row sees the rows
-- the same statement appended before it). It runs with the ledger's schema as
-- its search path (captured when it is created), so an insert from a session
-- whose search path is elsewhere is sealed all the same, by these functions.
CREATE OR REPLACE FUNCTION assay_seal_version() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $fn$
DECLARE
    v_previous text;
BEGIN
    NEW.version_sha256 := assay_version_digest(NEW.id, NEW.kind, NEW.scope, NEW.revision,
        NEW.data_sha256, NEW.status, NEW.superseded_by, NEW.links, NEW.audience, NEW.sources,
        NEW.created_at, NEW.ledger_revision, NEW.request_id, NEW.origin);
    SELECT v.chain_sha256 INTO v_previous FROM record_versions v
        WHERE v.ledger_revision < NEW.ledger_revision
        ORDER BY v.ledger_revision DESC LIMIT 1;
    IF NOT FOUND THEN
        v_previous := repeat('0', 64);
    END IF;
    NEW.chain_sha256 := assay_chain_digest(coalesce(v_previous, ''), NEW.version_sha256);
    RETURN NEW;
END
$fn$;

CREATE OR REPLACE TRIGGER assay_seal_version BEFORE INSERT ON record_versions
    FOR EACH ROW EXECUTE FUNCTION assay_seal_version();
-- assay_writer: the role a write is checked against. NULL for the ledger's
-- owner (a member of the role owning record_versions, or a superuser), which
-- acts as any principal, as the owner of the database can anyway; for any
-- other role its session_user, which the write's principal ('' or omitted
-- included) must be: else AS010. Every other check of a write is skipped for
-- the owner only.
CREATE OR REPLACE FUNCTION assay_writer(p_principal text) RETURNS text
LANGUAGE plpgsql STABLE AS $fn$
BEGIN
    IF pg_has_role(session_user, (SELECT c.relowner FROM pg_class c
                                  WHERE c.oid = 'record_versions'::regclass), 'MEMBER') THEN
        RETURN NULL;
    END IF;
    IF p_principal <> '' AND p_principal <> session_user::text THEN
        RAISE EXCEPTION USING ERRCODE = 'AS010', MESSAGE = json_build_object(
            'principal', p_principal, 'role', session_user)::text;
    END IF;
    RETURN session_user::text;
END
$fn$;

-- assay_is_reviewer: whether the session's role is a member of assay_reviewer
-- (false while that group role does not exist).
CREATE OR REPLACE FUNCTION assay_is_reviewer() RETURNS boolean
LANGUAGE plpgsql STABLE AS $fn$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles r WHERE r.rolname = 'assay_reviewer') THEN
        RETURN false;
    END IF;
    RETURN pg_has_role(session_user, 'assay_reviewer', 'MEMBER');
END
$fn$;

-- assay_check_write: what a role other than the owner (p_role) may write.
-- Only the project partition and its own private one (else AS011). The
-- reviewer-only writes need membership in assay_reviewer (else AS012): every
-- version of a reviewer kind; retiring or superseding a version of a gate
-- kind; and a gate pin, except the pins a work accept records on first use:
-- an unreviewed one ("reviewed": false) over no pin or an unreviewed one, and
-- over a reviewed pin an extension that keeps every entry it holds.
-- The lists are assay.ledger.roles.REVIEWER_KINDS and GATE_KINDS (a test
-- holds them equal). Called under the write lock, so the pin it reads is the
-- current one. p_index is the write's place in a batch (NULL for one write).
CREATE OR REPLACE FUNCTION assay_check_write(
    p_role text, p_kind text, p_status text, p_id text, p_audience text, p_data text,
    p_index integer
) RETURNS void
LANGUAGE plpgsql AS $fn$
DECLARE
    v_needs boolean;
    v_current jsonb;
    v_new jsonb;
BEGIN
    IF p_role IS NULL THEN
        RETURN;
    END IF;
    IF p_audience <> 'project' AND p_audience <> 'private:' || p_role THEN
        RAISE EXCEPTION USING ERRCODE = 'AS011', MESSAGE = json_build_object(
            'audience', p_audience, 'role', p_role, 'index', p_index)::text;
    END IF;
    v_needs := p_kind = ANY (ARRAY['gate-approval', 'gate-binding', 'attestation-key'])
        OR (p_status <> 'current' AND p_kind = ANY (ARRAY['gate-approval', 'gate-binding',
            'gate-pin', 'gate-session', 'shell-claim', 'attestation-key']));
    IF NOT v_needs AND p_kind = 'gate-pin' THEN
        SELECT v.data::jsonb INTO v_current FROM record_versions v
            WHERE v.id = p_id AND v.audience = p_audience ORDER BY v.revision DESC LIMIT 1;
        v_new := p_data::jsonb;
        IF v_current IS NULL OR (v_current ->> 'reviewed') = 'false' THEN
            v_needs := (v_new ->> 'reviewed') IS DISTINCT FROM 'false';
        ELSE
            -- Over a reviewed pin, only an extension: every entry it holds is
            -- kept (objects may gain entries, arrays items), only "how" changes.
            v_needs := EXISTS (SELECT 1 FROM jsonb_each(v_current) o
                               WHERE o.key <> 'how' AND NOT coalesce(
                                   CASE WHEN jsonb_typeof(o.value) = 'object'
                                        THEN v_new -> o.key @> o.value
                                        ELSE v_new -> o.key = o.value END, false));
        END IF;
    END IF;
    IF v_needs AND NOT assay_is_reviewer() THEN
        RAISE EXCEPTION USING ERRCODE = 'AS012', MESSAGE = json_build_object(
            'kind', p_kind, 'id', p_id, 'status', p_status, 'role', p_role,
            'index', p_index)::text;
    END IF;
END
$fn$;

-- Functions of earlier releases that the ones below replace.
DROP FUNCTION IF EXISTS assay_append(integer, text, text, text, text, text, text, text, text,
    text, text, text, text, text, bigint, text, text);
DROP FUNCTION IF EXISTS assay_put_many(text, text[], text, text, text, bigint, text);
-- (schema 6 added the indexed data fields, p_keys, to both.)
DROP FUNCTION IF EXISTS assay_put(text, text, text, text, text, text, text, text, text, text,
    text, text, text, bigint, text, text, text, bigint, text);
DROP FUNCTION IF EXISTS assay_put_many(text[], text[], text[], text[], text[], text[], text[],
    text[], text[], text[], text[], text[], text[], bigint[], text, text, text, bigint, text);

-- assay_put: one guarded write in one round trip (PostgreSQL).
-- It applies exactly the rules of assay.ledger.sql.SqlLedger._commit for a
-- single write (take the write lock, replay or refuse the request id of the
-- writing principal, check the write basis against the writer's view, append
-- the version with the next revisions of its (id, audience) partition, check
-- the expected revision, index links, data keys and the request id), and the store
-- conformance suite holds both paths to the same behaviour.
-- Under the lock, each statement's snapshot sees every earlier write: the
-- next ledger revision is the highest stored one plus one, and the record's
-- next revision its partition's highest plus one.
-- p_principal is '' for a handle opened without a principal; its view is the
-- project partition only. For a role other than the owner, the request ids
-- are its role's whatever p_principal says (see assay_writer).
-- It runs as the owner (SECURITY DEFINER, with the search path of the
-- ledger's schema then pg_temp fixed at creation): the only way other roles
-- write. assay_check_write decides what the calling role may write.
-- Conflicts raise SQLSTATE AS001 (request), AS002 (revision), AS003 (epoch),
-- refusals AS010 (principal), AS011 (audience), AS012 (reviewer), each with a
-- JSON message; raising aborts the call's transaction, so a refused write
-- changes nothing.
CREATE OR REPLACE FUNCTION assay_put(
    p_id text, p_kind text, p_scope text, p_data text, p_data_sha256 text, p_status text,
    p_superseded_by text, p_links text, p_audience text, p_sources text, p_origin text,
    p_request_id text, p_body_sha256 text, p_expect bigint, p_now text,
    p_basis_epoch text, p_basis text, p_basis_ledger_revision bigint, p_principal text,
    p_keys text
) RETURNS TABLE (o_revision bigint, o_ledger_revision bigint, o_replayed boolean,
                 o_data_sha256 text)
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $fn$
DECLARE
    v_request record;
    v_role text := assay_writer(p_principal);
    v_principal text := coalesce(v_role, p_principal);
BEGIN
    PERFORM pg_advisory_xact_lock(1634956130, 'record_versions'::regclass::oid::int);
    PERFORM assay_check_write(v_role, p_kind, p_status, p_id, p_audience, p_data, NULL);
    IF p_request_id IS NOT NULL THEN
        SELECT q.* INTO v_request FROM requests q
            WHERE q.principal = v_principal AND q.request_id = p_request_id;
        IF FOUND THEN
            IF v_request.body_sha256 <> p_body_sha256 THEN
                RAISE EXCEPTION USING ERRCODE = 'AS001', MESSAGE = json_build_object(
                    'request_id', p_request_id, 'id', v_request.id,
                    'revision', v_request.revision)::text;
            END IF;
            o_revision := v_request.revision;
            o_ledger_revision := v_request.ledger_revision;
            o_replayed := true;
            o_data_sha256 := v_request.data_sha256;
            RETURN NEXT;
            RETURN;
        END IF;
    END IF;
    IF p_basis_epoch IS NOT NULL THEN
        PERFORM assay_check_basis(p_basis_epoch, p_basis, p_basis_ledger_revision,
            CASE WHEN p_principal = '' THEN 'project' ELSE 'private:' || v_principal END);
    END IF;
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
            'basis', false)::text;
    END IF;
    IF o_revision > 1 THEN
        DELETE FROM record_links l WHERE l.id = p_id AND l.audience = p_audience;
    END IF;
    IF p_keys IS NOT NULL THEN
        INSERT INTO record_keys (field, value, ledger_revision, audience)
            SELECT x->>0, x->>1, o_ledger_revision, p_audience
            FROM json_array_elements(p_keys::json) x;
    END IF;
    IF p_links <> '[]' THEN
        INSERT INTO record_links (id, audience, rel, target)
            SELECT DISTINCT p_id, p_audience, x->>'rel', x->>'target'
            FROM jsonb_array_elements(p_links::jsonb) x;
    END IF;
    IF p_request_id IS NOT NULL THEN
        INSERT INTO requests (principal, request_id, body_sha256, id, audience, revision,
                              ledger_revision, data_sha256)
            VALUES (v_principal, p_request_id, p_body_sha256, p_id, p_audience, o_revision,
                    o_ledger_revision, p_data_sha256);
    END IF;
    o_replayed := false;
    o_data_sha256 := p_data_sha256;
    RETURN NEXT;
END
$fn$;

-- assay_put_many: a batch in one round trip (PostgreSQL), by the rules of
-- SqlLedger._commit: take the write lock; replay or refuse every request id
-- first (the first refusal in batch order raises AS001); when every write is
-- a replay, answer with the replays alone; otherwise check the write basis
-- once, read each other write's current revision (one index probe each),
-- raise AS002 for the first failed expectation in batch order, then append
-- those writes in batch order with one statement (the ledger revisions follow
-- the batch order; a batch never writes one (id, audience) twice, so each
-- version's revision is its partition's current one plus one), and re-point
-- the links and record the request ids with one statement each, all from the
-- parameters (no statement reads back what the batch appended).
-- The writes come as one array per field, in batch order (sent in binary:
-- no field is escaped into or parsed out of JSON, except each write's p_keys:
-- its record_keys rows as a JSON array of [field, value], NULL for none); p_superseded_by,
-- p_request_ids, p_body_sha256 and p_expect are NULL when no write of the
-- batch has one (unnest pads a NULL array with NULLs). Answers one row per write
-- with its place in the batch (o_index, from 0). Any conflict raises and
-- aborts the call's transaction: nothing of the batch is written.
CREATE OR REPLACE FUNCTION assay_put_many(
    p_ids text[], p_kinds text[], p_scopes text[], p_data text[], p_data_sha256 text[],
    p_statuses text[], p_superseded_by text[], p_links text[], p_audiences text[],
    p_sources text[], p_origins text[], p_request_ids text[], p_body_sha256 text[],
    p_expect bigint[], p_now text, p_basis_epoch text, p_basis text,
    p_basis_ledger_revision bigint, p_principal text, p_keys text[]
) RETURNS TABLE (o_index integer, o_revision bigint, o_ledger_revision bigint,
                 o_replayed boolean, o_data_sha256 text)
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $fn$
DECLARE
    v_role text := assay_writer(p_principal);
    v_principal text := coalesce(v_role, p_principal);
    v_count integer := cardinality(p_ids);
    v_fresh boolean[];
    v_current bigint[];
    v_ledger_revisions bigint[];
    v_base bigint;
    v_bad record;
BEGIN
    PERFORM pg_advisory_xact_lock(1634956130, 'record_versions'::regclass::oid::int);
    IF v_role IS NOT NULL THEN
        FOR v_bad IN SELECT e.* FROM unnest(p_kinds, p_statuses, p_ids, p_audiences, p_data)
                     WITH ORDINALITY e(kind, status, id, audience, data, n) ORDER BY e.n LOOP
            PERFORM assay_check_write(v_role, v_bad.kind, v_bad.status, v_bad.id,
                                      v_bad.audience, v_bad.data, (v_bad.n - 1)::integer);
        END LOOP;
    END IF;
    IF p_request_ids IS NOT NULL THEN
        SELECT r.n, r.request_id, q.id, q.revision INTO v_bad
            FROM unnest(p_request_ids, p_body_sha256) WITH ORDINALITY r(request_id, body, n)
            JOIN requests q ON q.principal = v_principal AND q.request_id = r.request_id
            WHERE q.body_sha256 <> r.body
            ORDER BY r.n LIMIT 1;
        IF FOUND THEN
            RAISE EXCEPTION USING ERRCODE = 'AS001', MESSAGE = json_build_object(
                'request_id', v_bad.request_id, 'id', v_bad.id,
                'revision', v_bad.revision)::text;
        END IF;
        RETURN QUERY SELECT (r.n - 1)::integer, q.revision, q.ledger_revision, true,
                            q.data_sha256
            FROM unnest(p_request_ids) WITH ORDINALITY r(request_id, n)
            JOIN requests q ON q.principal = v_principal AND q.request_id = r.request_id;
        SELECT array_agg(q.request_id IS NULL ORDER BY r.n) INTO v_fresh
            FROM unnest(p_request_ids) WITH ORDINALITY r(request_id, n)
            LEFT JOIN requests q ON q.principal = v_principal AND q.request_id = r.request_id;
        IF NOT (true = ANY (v_fresh)) THEN
            RETURN;
        END IF;
    ELSE
        v_fresh := array_fill(true, ARRAY[v_count]);
    END IF;
    IF p_basis_epoch IS NOT NULL THEN
        PERFORM assay_check_basis(p_basis_epoch, p_basis, p_basis_ledger_revision,
            CASE WHEN p_principal = '' THEN 'project' ELSE 'private:' || v_principal END);
    END IF;
    SELECT coalesce(max(v.ledger_revision), 0) INTO v_base FROM record_versions v;
    SELECT array_agg(s.revision ORDER BY s.n), array_agg(s.ledger_revision ORDER BY s.n)
        INTO v_current, v_ledger_revisions
        FROM (SELECT e.n, coalesce(c.revision, 0) AS revision,
                     v_base + count(*) FILTER (WHERE v_fresh[e.n]) OVER (ORDER BY e.n)
                         AS ledger_revision
              FROM unnest(p_ids, p_audiences) WITH ORDINALITY e(id, audience, n)
              LEFT JOIN LATERAL (SELECT v.revision FROM record_versions v
                                 WHERE v_fresh[e.n] AND v.id = e.id AND v.audience = e.audience
                                 ORDER BY v.revision DESC LIMIT 1) c ON true) s;
    SELECT e.n, e.id, e.expected INTO v_bad
        FROM unnest(p_ids, p_expect) WITH ORDINALITY e(id, expected, n)
        WHERE v_fresh[e.n] AND e.expected IS NOT NULL AND e.expected <> v_current[e.n]
        ORDER BY e.n LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'AS002', MESSAGE = json_build_object(
            'id', v_bad.id, 'current_revision', v_current[v_bad.n], 'expected', v_bad.expected,
            'basis', false, 'index', v_bad.n - 1)::text;
    END IF;
    INSERT INTO record_versions (ledger_revision, id, revision, kind, scope, data,
        data_sha256, status, superseded_by, links, audience, sources, origin, created_at,
        request_id)
        SELECT v_ledger_revisions[e.n], e.id, v_current[e.n] + 1, e.kind, e.scope, e.data,
               e.data_sha256, e.status, e.superseded_by, e.links, e.audience, e.sources,
               e.origin, p_now, e.request_id
        FROM unnest(p_ids, p_kinds, p_scopes, p_data, p_data_sha256, p_statuses,
                    p_superseded_by, p_links, p_audiences, p_sources, p_origins,
                    p_request_ids) WITH ORDINALITY
             e(id, kind, scope, data, data_sha256, status, superseded_by, links, audience,
               sources, origin, request_id, n)
        WHERE v_fresh[e.n]
        ORDER BY e.n;
    IF EXISTS (SELECT 1 FROM unnest(v_current, v_fresh) c(revision, fresh)
               WHERE c.fresh AND c.revision > 0) THEN
        DELETE FROM record_links l
            USING unnest(p_ids, p_audiences) WITH ORDINALITY e(id, audience, n)
            WHERE v_fresh[e.n] AND v_current[e.n] > 0 AND l.id = e.id
              AND l.audience = e.audience;
    END IF;
    IF p_keys IS NOT NULL THEN
        INSERT INTO record_keys (field, value, ledger_revision, audience)
            SELECT x->>0, x->>1, v_ledger_revisions[e.n], e.audience
            FROM unnest(p_keys, p_audiences) WITH ORDINALITY e(keys, audience, n),
                 json_array_elements(e.keys::json) x
            WHERE v_fresh[e.n] AND e.keys IS NOT NULL;
    END IF;
    IF EXISTS (SELECT 1 FROM unnest(p_links) x WHERE x <> '[]') THEN
        INSERT INTO record_links (id, audience, rel, target)
            SELECT DISTINCT e.id, e.audience, x->>'rel', x->>'target'
            FROM unnest(p_ids, p_audiences, p_links) WITH ORDINALITY e(id, audience, links, n),
                 jsonb_array_elements(e.links::jsonb) x
            WHERE v_fresh[e.n] AND e.links <> '[]';
    END IF;
    IF p_request_ids IS NOT NULL THEN
        INSERT INTO requests (principal, request_id, body_sha256, id, audience, revision,
                              ledger_revision, data_sha256)
            SELECT v_principal, e.request_id, e.body, e.id, e.audience, v_current[e.n] + 1,
                   v_ledger_revisions[e.n], e.data_sha256
            FROM unnest(p_ids, p_audiences, p_request_ids, p_body_sha256, p_data_sha256)
                 WITH ORDINALITY e(id, audience, request_id, body, data_sha256, n)
            WHERE v_fresh[e.n] AND e.request_id IS NOT NULL;
    END IF;
    RETURN QUERY SELECT (e.n - 1)::integer, v_current[e.n] + 1, v_ledger_revisions[e.n], false,
                        e.data_sha256
        FROM unnest(p_data_sha256) WITH ORDINALITY e(data_sha256, n)
        WHERE v_fresh[e.n];
END
$fn$;

-- assay_text_candidates: the ledger revisions of at most p_limit versions
-- whose lower(id) or lower(data) is LIKE p_pattern (find's text query), among
-- the versions the calling role reads (its SELECT privilege and the policy
-- below, applied here as a condition on session_user). A role under
-- row-level security calls it so that the trigram indexes answer: there,
-- LIKE (not leakproof) is evaluated only after the policy, on every row. It
-- runs as the owner (SECURITY DEFINER) and plans the query with the pattern
-- itself, so a rare term reads the indexes and a common one stops at the
-- limit. The owner reads with LIKE directly and never calls it.
CREATE OR REPLACE FUNCTION assay_text_candidates(p_pattern text, p_limit integer)
RETURNS SETOF bigint
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path FROM CURRENT AS $fn$
BEGIN
    IF NOT has_table_privilege(session_user, 'record_versions', 'SELECT') THEN
        RETURN;
    END IF;
    RETURN QUERY EXECUTE format(
        'SELECT v.ledger_revision FROM record_versions v '
        'WHERE (lower(v.id) LIKE %1$L OR lower(v.data) LIKE %1$L) '
        'AND (v.audience = ''project'' OR v.audience = ''private:'' || session_user) '
        'LIMIT %2$s', p_pattern, p_limit);
END
$fn$;

-- Row-level security: a role that is not the ledger's owner (nor a
-- superuser) reads, even with raw SQL, only the project partition and its
-- own private partition (private:<its role>), and its own request ids. The
-- owner is exempt (the policies are not forced): it migrates and answers for
-- every principal. No policy allows INSERT, UPDATE or DELETE: other roles
-- write only through the SECURITY DEFINER functions of function_postgres.sql.
-- The tables and their partition columns are listed in assay.ledger.roles.
ALTER TABLE record_versions ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS assay_read ON record_versions;
CREATE POLICY assay_read ON record_versions FOR SELECT
    USING (audience = 'project' OR audience = 'private:' || session_user);
ALTER TABLE record_links ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS assay_read ON record_links;
CREATE POLICY assay_read ON record_links FOR SELECT
    USING (audience = 'project' OR audience = 'private:' || session_user);
ALTER TABLE record_keys ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS assay_read ON record_keys;
CREATE POLICY assay_read ON record_keys FOR SELECT
    USING (audience = 'project' OR audience = 'private:' || session_user);
ALTER TABLE requests ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS assay_read ON requests;
CREATE POLICY assay_read ON requests FOR SELECT USING (principal = session_user);
