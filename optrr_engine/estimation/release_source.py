"""Access to a release (perturbed data file + manifest) for estimation.

The manifest is loaded and checked by ``optrr_engine.release.manifest`` (format, keys, epsilons against the
mechanism, SHA-256 of the data file); the data file is streamed by ``optrr_engine.io.readers`` as Arrow
tables, each column dictionary-encoded and mapped to codes by the manifest's ordered categories.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..errors import InputError
from ..mechanism import Mechanism

if TYPE_CHECKING:
    from ..sampling.design import SamplingDesign

#: Rows per chunk when reading a release.
CHUNK_ROWS = 1_000_000


def load_manifest(path: str, data_path: str | None = None, check_hash: bool = True) -> dict:
    from ..release.manifest import load_manifest as load

    return load(path, data_path=data_path, check_hash=check_hash)


def mechanism_from_manifest(manifest: dict) -> Mechanism | SamplingDesign:
    from ..release.manifest import mechanism_from_manifest as rebuild

    return rebuild(manifest)


def reader_options():
    """The reader options of a release file (chunks of CHUNK_ROWS rows)."""
    from ..io.readers import ReaderOptions

    return ReaderOptions(chunk_rows=CHUNK_ROWS)


def not_private_warning(path: str, manifest: dict | None = None) -> str | None:
    """The loud warning for a release that is not private, read from the data file's own header (the test-seed
    marker column, which survives the file being separated from its manifest) or from the manifest; else None."""
    from ..io.readers import column_names
    from ..release.randomness import not_private_reason

    return not_private_reason(column_names(path, reader_options()), manifest)


def check_rows(manifest: dict, rows: int) -> None:
    """Refuse a release whose data file holds another number of rows than its manifest says."""
    total = manifest.get("rows")
    if total is not None and int(total) != rows:
        raise InputError(f"the release has {rows} rows but its manifest says {total}; the files do not match")


def iter_code_chunks(path: str, names: list[str], categories: list[list[str]], not_reported: str | None = None):
    """Integer codes (rows, len(names)) chunk by chunk, labels mapped by the manifest's categories; with
    ``not_reported`` (a sampling release's marker) that label becomes code -1."""
    from ..io.readers import iter_tables

    for table in iter_tables(path, reader_options(), columns=names):
        missing = [n for n in names if n not in table.column_names]
        if missing:
            raise InputError(f"the release file has no column {missing[0]!r}")
        yield np.stack(
            [encode_arrow(table.column(n), c, n, not_reported) for n, c in zip(names, categories, strict=True)],
            axis=1,
        )


def _lookup(seen: list, categories: list[str], name: str, not_reported: str | None = None) -> np.ndarray:
    """Code of each distinct released label ``seen`` in the manifest's ``categories``; ``not_reported`` (a sampling
    release's marker) becomes -1; any other label not among the categories is an error."""
    import pandas as pd

    lookup = pd.Index(categories).get_indexer(seen)
    unknown = lookup < 0
    if not_reported is not None:
        marker = np.asarray(seen, dtype=object) == not_reported
        lookup[marker] = -1
        unknown &= ~marker
    if np.any(unknown):
        bad = seen[int(np.flatnonzero(unknown)[0])]
        raise InputError(f"value {bad!r} in column {name!r} is not one of the manifest's categories")
    return lookup


def _missing_code(categories: list[str], name: str) -> int:
    """Empty cells are read as missing; they are the category "" when the manifest has one."""
    if "" in categories:
        return categories.index("")
    raise InputError(f"column {name!r} has empty cells, which are not among the manifest's categories")


def encode_arrow(column, categories: list[str], name: str, not_reported: str | None = None) -> np.ndarray:
    """Codes of an Arrow string column: the few distinct labels (dictionary encoding) mapped, then gathered."""
    from ..io.arrow_codes import dictionary_codes

    index, distinct = dictionary_codes(column)
    lookup = _lookup([str(v) for v in distinct.to_pylist()], categories, name, not_reported)
    if np.any(index < 0):
        lookup = np.append(lookup, _missing_code(categories, name))
        index = np.where(index < 0, len(lookup) - 1, index)
    return lookup[index]


#: What a column of the manifest's ``kept_columns`` is and what to do with it instead of estimating it: the words of
#: the CLI's error (estimate, analyze) and of the GUI's Analyse tab.
KEPT_COLUMN_HINT = "copied unchanged (kept, not randomized); tabulate it directly from the file"
#: The same said of several kept columns.
KEPT_COLUMNS_HINT = "copied unchanged (kept, not randomized); tabulate them directly from the file"


def kept_column_message(name: str) -> str:
    """Why the kept column ``name`` has no estimate: "'site' is a column copied unchanged (kept, ...)"."""
    return f"{name!r} is a column {KEPT_COLUMN_HINT}"


def match_column(name: str, columns: list[str]) -> str | None:
    """The column ``name`` denotes: itself, or the one column equal to it apart from surrounding white space."""
    if name in columns:
        return name
    stripped = [c.strip() for c in columns]
    return columns[stripped.index(name.strip())] if stripped.count(name.strip()) == 1 else None


def attribute_index(manifest: dict, names: list[str]) -> list[int]:
    """Positions of the named attributes in the manifest (= in its mechanism). A name that is not a randomized
    attribute is an error; for one of the manifest's ``kept_columns`` (copied unchanged) it says so."""
    known = [str(a["name"]) for a in manifest["attributes"]]
    kept = [str(c) for c in manifest.get("kept_columns") or []]
    listed = ", ".join(repr(k) for k in known)  # quoted: a name may hold a comma
    out = []
    for name in names:
        column = match_column(str(name), known)
        if column is not None:
            out.append(known.index(column))
        elif match_column(str(name), kept) is not None:
            raise InputError(f"{kept_column_message(name)} (randomized attributes: {listed})")
        else:
            raise InputError(f"attribute {name!r} is not in the release; perturbed attributes: {listed}")
    if len(set(out)) != len(out):
        raise InputError("an attribute is named twice in the marginal")
    return out
