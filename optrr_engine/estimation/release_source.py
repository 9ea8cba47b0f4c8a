"""Access to a release (perturbed data file + manifest) for estimation.

Uses ``optrr_engine.release.manifest`` (load_manifest, mechanism_from_manifest) and
``optrr_engine.io.readers.iter_chunks`` when they are installed; until then a minimal private stand-in reads
a JSON manifest and CSV chunks with the same contract (strings, no NA conversion).
"""

from __future__ import annotations

import json
import os

import numpy as np

from ..errors import InputError
from ..mechanism import Mechanism

#: Rows per chunk when reading a release.
CHUNK_ROWS = 1_000_000


def load_manifest(path: str, data_path: str | None = None, check_hash: bool = True) -> dict:
    try:
        from ..release.manifest import load_manifest as real
    except ImportError:
        return _standin_load_manifest(path)
    return real(path, data_path=data_path, check_hash=check_hash)


def mechanism_from_manifest(manifest: dict) -> Mechanism:
    try:
        from ..release.manifest import mechanism_from_manifest as real
    except ImportError:
        return Mechanism.from_dict(manifest["mechanism"])
    return real(manifest)


def iter_chunks(path: str, columns: list[str]):
    try:
        from ..io.readers import iter_chunks as real
    except ImportError:
        yield from _standin_iter_chunks(path, columns)
        return
    yield from real(path, _reader_options(), columns=columns)


def _reader_options():
    try:
        from ..io.readers import ReaderOptions
    except ImportError:
        return None
    return ReaderOptions(chunk_rows=CHUNK_ROWS)


def iter_code_chunks(path: str, names: list[str], categories: list[list[str]]):
    """Integer codes (rows, len(names)) chunk by chunk, labels mapped by the manifest's categories.

    Uses the reader's Arrow tables (dictionary-encoded per chunk, no Python strings per cell) when the
    installed reader offers them, else its pandas chunks.
    """
    try:
        from ..io.readers import iter_tables
    except ImportError:
        iter_tables = None
    if iter_tables is None:
        for chunk in iter_chunks(path, names):
            missing = [n for n in names if n not in chunk.columns]
            if missing:
                raise InputError(f"the release file has no column {missing[0]!r}")
            yield np.stack(
                [encode_column(chunk[n].to_numpy(), c, n) for n, c in zip(names, categories, strict=True)], axis=1
            )
        return
    for table in iter_tables(path, _reader_options(), columns=names):
        missing = [n for n in names if n not in table.column_names]
        if missing:
            raise InputError(f"the release file has no column {missing[0]!r}")
        yield np.stack([encode_arrow(table.column(n), c, n) for n, c in zip(names, categories, strict=True)], axis=1)


def _lookup(seen: list, categories: list[str], name: str) -> np.ndarray:
    import pandas as pd

    lookup = pd.Index(categories).get_indexer(seen)
    if np.any(lookup < 0):
        bad = seen[int(np.flatnonzero(lookup < 0)[0])]
        raise InputError(f"value {bad!r} in column {name!r} is not one of the manifest's categories")
    return lookup


def _missing_code(categories: list[str], name: str) -> int:
    """Empty cells are read as missing; they are the category "" when the manifest has one."""
    if "" in categories:
        return categories.index("")
    raise InputError(f"column {name!r} has empty cells, which are not among the manifest's categories")


def encode_arrow(column, categories: list[str], name: str) -> np.ndarray:
    """Codes of an Arrow string column: dictionary-encode, then map the few distinct labels."""
    import pyarrow.compute as pc

    enc = pc.dictionary_encode(column.combine_chunks() if hasattr(column, "combine_chunks") else column)
    lookup = _lookup([str(v) for v in enc.dictionary.to_pylist()], categories, name)
    idx = enc.indices
    if idx.null_count:
        filler = len(lookup)
        lookup = np.append(lookup, _missing_code(categories, name))
        idx = pc.fill_null(idx, filler)
    return lookup[idx.to_numpy(zero_copy_only=False)]


def _standin_load_manifest(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as fh:
            manifest = json.load(fh)
    except FileNotFoundError:
        raise InputError(f"manifest {path} does not exist") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"manifest {path} is not valid JSON: {exc}") from None
    if not isinstance(manifest, dict) or "attributes" not in manifest or "mechanism" not in manifest:
        raise InputError(f"manifest {path} lacks 'attributes' or 'mechanism'")
    return manifest


def _standin_iter_chunks(path: str, columns: list[str]):
    import pandas as pd

    if not os.path.exists(path):
        raise InputError(f"release file {path} does not exist")
    try:
        reader = pd.read_csv(
            path, dtype=str, keep_default_na=False, na_filter=False, usecols=columns, chunksize=CHUNK_ROWS
        )
        yield from reader
    except ValueError as exc:
        raise InputError(f"could not read columns {columns} from {path}: {exc}") from None


def attribute_index(manifest: dict, names: list[str]) -> list[int]:
    """Positions of the named attributes in the manifest (= in its mechanism)."""
    known = [str(a["name"]) for a in manifest["attributes"]]
    stripped = [k.strip() for k in known]
    out = []
    for name in names:
        if name in known:
            out.append(known.index(name))
        elif stripped.count(str(name).strip()) == 1:
            out.append(stripped.index(str(name).strip()))
        else:
            raise InputError(f"attribute {name!r} is not in the release; perturbed attributes: {', '.join(known)}")
    if len(set(out)) != len(out):
        raise InputError("an attribute is named twice in the marginal")
    return out


def encode_column(values, categories: list[str], name: str) -> np.ndarray:
    """Codes 0..a-1 of string labels by the manifest's ordered categories; unknown labels are an error."""
    import pandas as pd

    seen_codes, seen = pd.factorize(values)  # hash once; then map the few distinct labels (NaN -> -1)
    lookup = _lookup([str(v) for v in seen], categories, name)
    if np.any(seen_codes < 0):
        lookup = np.append(lookup, _missing_code(categories, name))  # index -1 picks it
    return lookup[seen_codes]
