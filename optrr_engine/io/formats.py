"""File formats known by extension."""

from __future__ import annotations

import os

from ..errors import InputError

#: extension -> format name
EXTENSIONS = {
    ".csv": "csv",
    ".tsv": "csv",
    ".txt": "csv",
    ".xlsx": "xlsx",
    ".parquet": "parquet",
    ".sav": "sav",
    ".dta": "dta",
}
#: formats a release can be written in
OUTPUT_FORMATS = ("csv", "parquet", "xlsx", "sav", "dta")
#: the extension written for each output format when the user gives none
DEFAULT_EXTENSION = {"csv": ".csv", "parquet": ".parquet", "xlsx": ".xlsx", "sav": ".sav", "dta": ".dta"}


def extension(path) -> str:
    return os.path.splitext(str(path))[1].lower()


def known_format(path) -> str | None:
    """The format implied by the file name, or None."""
    return EXTENSIONS.get(extension(path))


def format_of(path) -> str:
    """The format of an input file; a one-line error for anything else."""
    fmt = known_format(path)
    if fmt is None:
        ext = extension(path) or "(none)"
        known = " ".join(sorted(EXTENSIONS))
        raise InputError(f"{os.path.basename(str(path))}: unsupported file type {ext}; use one of {known}")
    return fmt


def text_path(path, what: str = "file") -> str:
    """The path as text; a one-line error when its name is not valid UTF-8 (bytes on Linux), which the file
    libraries OptRR uses (pyarrow, openpyxl, pyreadstat) cannot open."""
    path = os.fsdecode(os.fspath(path))
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        raise InputError(
            f"the {what} name {os.fsencode(path)!r} is not valid UTF-8 text; rename the file (or its folder)"
        ) from None
    return path
