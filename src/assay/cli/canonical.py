"""``assay canonical`` on its short path: no click, no other operation modules.

Hooks and agents run ``assay canonical --digest`` often, and building the
whole command tree (click and every operation module) would cost several
times the work itself. :func:`assay.cli.main` takes this path only for
exactly ``canonical`` with distinct ``--digest``/``--fingerprint`` flags;
every other spelling (``--help``, ``--format``, ``--debug``, ``--``, a typo)
goes through click. Both paths run the same registered handler and the same
renderers, and a test holds them to byte-identical output and exit status.
"""

from __future__ import annotations

import sys
import traceback

from assay.cli import debug_requested, internal_error, is_tty, read_stdin_text

__all__ = ["run_canonical"]


def run_canonical(flags: list[str]) -> int:
    """Canonicalise standard input as ``assay canonical FLAGS`` does; return the exit status."""
    from assay.cli.render import RAW, fail
    from assay.errors import EXIT_INTERNAL, AssayError

    as_json = not is_tty(sys.stderr)
    try:
        from assay.ops import Invocation
        from assay.ops.core import canonical

        args = {"text": read_stdin_text(), **{flag[2:]: True for flag in flags}}
        result = canonical(Invocation(surface="cli"), args)
        sys.stdout.write(RAW["canonical"]({"data": result.data}, args) or "")
        sys.stdout.flush()
        return result.exit_code
    except AssayError as err:
        return fail(err, as_json)
    except BrokenPipeError:
        return 0
    except Exception as exc:  # noqa: BLE001 - as in assay.cli.app.run: a bug is exit 70
        if debug_requested(flags):
            traceback.print_exc()
        fail(internal_error(exc), as_json)
        return EXIT_INTERNAL
