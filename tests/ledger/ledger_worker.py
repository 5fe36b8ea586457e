"""Worker processes for the concurrency and crash tests (run as scripts).

``cas URL SECONDS``: compare-and-set increments of ``counter:shared`` until the
time is up; prints one JSON line per committed receipt, then a summary line.

``writer URL``: writes distinct records forever, printing each receipt as a
JSON line as soon as the write is acknowledged (the parent kills it).

``count URL N NAME``: writes N distinct records named after NAME (with request
ids), printing each receipt as a JSON line.

``late URL BOUND_MS [own-alarm]``: one put with a wait bound of BOUND_MS
(behind a holder, it times out), printing the outcome and the process's
``SIGALRM`` state as one JSON line; then, after a line on standard input,
a second put with the full bound (none when standard input is closed
first). ``own-alarm`` first installs a handler of
its own for ``SIGALRM``.

``hold URL``: opens a write transaction (holding the writers' queue and the
write lock), prints ``holding`` and sleeps until killed.
"""

from __future__ import annotations

import json
import sys
import time

from assay.errors import RevisionConflict
from assay.ledger import Write, open_store

SCOPE = "project:demo"


def cas(url: str, seconds: float) -> None:
    store = open_store(url)
    deadline = time.monotonic() + seconds
    committed = conflicts = 0
    while time.monotonic() < deadline:
        with store.reader() as r:
            current = r.get("counter:shared")
        value = current.data["n"] if current else 0
        revision = current.revision if current else 0
        try:
            receipt = store.put(Write(id="counter:shared", data={"n": value + 1}, scope=SCOPE,
                                      expect_revision=revision))
        except RevisionConflict:
            conflicts += 1
            continue
        committed += 1
        print(json.dumps({"receipt": receipt.to_dict()}), flush=True)
    print(json.dumps({"committed": committed, "conflicts": conflicts}), flush=True)
    store.close()


def writer(url: str) -> None:
    store = open_store(url)
    i = 0
    while True:
        receipt = store.put(Write(id=f"knowledge:item-{i}", data={"i": i, "pad": "x" * (i % 500)},
                                  scope=SCOPE, request_id=f"req-{i}"))
        sys.stdout.write(json.dumps(receipt.to_dict()) + "\n")
        sys.stdout.flush()
        i += 1


def count(url: str, n: int, name: str) -> None:
    store = open_store(url)
    for i in range(n):
        receipt = store.put(Write(id=f"knowledge:{name}-{i}", data={"i": i}, scope=SCOPE,
                                  request_id=f"{name}-{i}"))
        print(json.dumps(receipt.to_dict()), flush=True)
    store.close()


def late(url: str, bound_ms: int, own_alarm: bool) -> None:
    import signal

    from assay.errors import AssayError

    def mine(signum: int, frame: object) -> None:
        pass

    if own_alarm:
        signal.signal(signal.SIGALRM, mine)
    store = open_store(url)
    store.busy_timeout_ms = bound_ms  # type: ignore[attr-defined]
    try:
        store.put(Write(id="knowledge:late", data={}, scope=SCOPE))
        outcome = "written"
    except AssayError as exc:
        outcome = exc.code
    handler = signal.getsignal(signal.SIGALRM)
    print(json.dumps({"outcome": outcome,
                      "handler": "own" if handler is mine else str(handler),
                      "timer": list(signal.getitimer(signal.ITIMER_REAL))}), flush=True)
    if not sys.stdin.readline():  # standard input closed: only the first outcome was wanted
        store.close()
        return
    store.busy_timeout_ms = 30_000  # type: ignore[attr-defined]
    receipt = store.put(Write(id="knowledge:next", data={}, scope=SCOPE))
    print(json.dumps(receipt.to_dict()), flush=True)
    store.close()


def hold(url: str) -> None:
    store = open_store(url)
    with store._write_transaction():  # type: ignore[attr-defined]
        print("holding", flush=True)
        while True:
            time.sleep(60)


if __name__ == "__main__":
    if sys.argv[1] == "cas":
        cas(sys.argv[2], float(sys.argv[3]))
    elif sys.argv[1] == "count":
        count(sys.argv[2], int(sys.argv[3]), sys.argv[4])
    elif sys.argv[1] == "late":
        late(sys.argv[2], int(sys.argv[3]), "own-alarm" in sys.argv[4:])
    elif sys.argv[1] == "hold":
        hold(sys.argv[2])
    else:
        writer(sys.argv[2])
