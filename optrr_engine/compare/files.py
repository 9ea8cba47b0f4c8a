"""Atomic output files of the comparisons: written to a temp file in the folder, then ``os.replace``d."""

from __future__ import annotations

import os
import tempfile

from ..errors import InputError


def write_atomic(path: str, write) -> str:
    """Call ``write(tmp)`` on a temp file next to ``path`` (folder created if missing), then rename it to
    ``path``; on any error the temp file is removed and nothing appears under ``path``."""
    folder = os.path.dirname(os.path.abspath(path))
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot create the output folder {folder}: {exc.strerror}") from None
    fd, tmp = tempfile.mkstemp(prefix=".optrr-", suffix=".tmp", dir=folder)
    os.close(fd)
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
    return path
