"""``assay canonical`` on its short path: no click, no operations registry.

Hooks and agents run ``assay canonical --digest`` often, and building the
whole command tree (click and every operation module) would cost several
times the work itself. :func:`assay.cli.main` takes this path only for
exactly ``canonical`` with distinct ``--digest``/``--fingerprint`` flags;
every other spelling (``--help``, ``--format``, ``--debug``, ``--``, a typo)
goes through click. This path makes the same :mod:`assay.canonical` calls as
the registered ``canonical`` handler and prints what its renderer prints; a
test holds the two paths to byte-identical output and exit status.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from assay.cli import debug_requested, internal_error, is_tty, on_terminal, read_stdin_text

if TYPE_CHECKING:
    from assay.errors import AssayError

__all__ = ["run_canonical"]


def run_canonical(flags: list[str]) -> int:
    """Canonicalise standard input as ``assay canonical FLAGS`` does; return the exit status."""
    from assay.errors import EXIT_INTERNAL, AssayError

    try:
        from assay.canonical import canonical_bytes, digest_bytes, parse

        text = read_stdin_text()
        raw = canonical_bytes(parse(text.encode("utf-8", "surrogatepass")))
        if "--digest" in flags:
            out = digest_bytes(raw)
        elif "--fingerprint" in flags:
            out = "sha256:" + digest_bytes(raw)
        else:
            out = raw.decode("utf-8")
        sys.stdout.write(on_terminal(out + "\n", sys.stdout))
        sys.stdout.flush()
        return 0
    except AssayError as err:
        return _fail(err)
    except BrokenPipeError:
        return 0
    except Exception as exc:  # noqa: BLE001 - as in assay.cli.app.run: a bug is exit 70
        if debug_requested(flags):
            import traceback

            traceback.print_exc()
        _fail(internal_error(exc))
        return EXIT_INTERNAL


def _fail(err: AssayError) -> int:
    from assay.cli.render import fail

    return fail(err, not is_tty(sys.stderr))
