"""What to do about the errors of opening a release, in command-line terms (``optrr estimate`` / ``analyze``):
the engine's messages stay front-end neutral, these add the option that answers them."""

from __future__ import annotations

import os
from contextlib import contextmanager

from ..errors import InputError

SPREADSHEET_NOTE = (
    "a file re-saved by a spreadsheet program may differ in bytes only (line endings, quoting, encoding) with the "
    "same values: if you trust it, skip this check with --no-hash-check (the values are still checked against the "
    "manifest's categories and row count)"
)


def check_manifest_found(args) -> None:
    """With no --manifest, the default manifest beside an existing release must exist; else the error suggests
    --manifest PATH (a release renamed by its recipient keeps its manifest's old name)."""
    from ..estimation.release_estimate import default_manifest_path

    if args.manifest is not None or not os.path.exists(args.release):
        return
    default = default_manifest_path(args.release)
    if not os.path.exists(default):
        raise InputError(
            f"manifest {default} does not exist: if the release file was renamed, give its manifest with "
            "--manifest PATH (the .manifest.json file that came with it)"
        )


@contextmanager
def release_hints(args):
    """Run the body that opens ``args.release``: a missing default manifest names --manifest PATH; a data file whose
    SHA-256 differs from its manifest's names --no-hash-check and says why a trusted file may differ."""
    from ..release.manifest import HashMismatchError

    check_manifest_found(args)
    try:
        yield
    except HashMismatchError as exc:
        raise InputError(f"{exc}; {SPREADSHEET_NOTE}") from None
