"""The hospital's internal audit record ``optrr-audit.json`` and its privacy ledger (docs/formats.md).

A release has two records. The manifest goes to the recipient and says only what analysis needs; this
audit record stays with the hospital, in a folder it chooses (``--audit-dir``, else the environment variable
``OPTRR_AUDIT_DIR``, else the per-user data folder ``platformdirs.user_data_dir("OptRR")/audit``: never a
folder that might be shipped with a release), and holds what must never travel with a release: the input
file's name, path, size and SHA-256, the key's fingerprint, the full configuration, the row counts of the
raw file, and the history of every release recorded in that folder.

Concurrency: every change of the record is a read-modify-write under an exclusive file lock
(``optrr-audit.json.lock``, the ``filelock`` package), written through a temporary file and a rename, so
runs in parallel never lose an entry and a reader never sees a half-written record.

Ledger: releases of the same source are found by the input's SHA-256 (before the pass) and by the fingerprints
of the records read (:class:`ColumnFingerprints`, at the commit point under the lock), so a copy with other bytes
(a blank line added, the same data saved as .xlsx, the rows in another order) is recognised too, and so is a near
repeat (the same records in the same order with rows added, removed or changed: a monthly re-export) by a
similarity sketch of the record sequence (:class:`RecordSketch`), and a near repeat in another order (re-sorted with
rows added or removed) by a sketch of the set of records (:class:`RecordSet`) when the records are distinctive (at
least SET_MIN_DISTINCT_SHARE of the rows distinct in both files). Randomizing the same records twice with
independent noise costs the sum of the whole-record epsilons (basic sequential composition), so a second release
of a source needs an explicit confirmation and the accumulated epsilon is shown.
"""

from __future__ import annotations

import json
import os
from contextlib import contextmanager

from ..errors import InputError

AUDIT_NAME = "optrr-audit.json"
AUDIT_DIR_ENV = "OPTRR_AUDIT_DIR"
LOCK_SUFFIX = ".lock"
#: Seconds a run waits for another run's hold on the audit record (a hold lasts milliseconds).
LOCK_TIMEOUT = 120.0
AUDIT_FORMAT = "optrr-audit"
AUDIT_VERSION = 1
INTERNAL_REPORT_SUFFIX = ".internal-report.html"


class RepeatReleaseError(InputError):
    """The source was released before; releasing it again needs confirmation (``allow_repeat``). ``previous``: the
    earlier releases (audit entries, ledger order); ``accumulated``: the whole-record epsilon with this release;
    ``columns``: the columns found identical, value by value, in the records of another input (empty when the same
    input was recognised by its bytes); ``reordered``: the same records were found in another order (the records'
    multiset hash matched, no column); ``near``: the earlier releases found only as near repeats (rows added,
    removed or changed, in the same order or, ``"reordered"``, in another; :func:`repeats_of`'s dicts,
    :func:`near_sentence`); ``reproduces``: the earlier release (audit entry) this keyed run would write again byte
    for byte (:func:`reproduced_release`: it adds nothing, ``accumulated`` is the sum without it)."""

    def __init__(
        self,
        message: str,
        previous: list,
        accumulated: float,
        columns=(),
        reordered: bool = False,
        near=(),
        reproduces: dict | None = None,
    ):
        super().__init__(message)
        self.previous = previous
        self.accumulated = accumulated
        self.reproduces = reproduces  # the earlier release this run would write again byte for byte (keyed)
        self.columns = [str(c) for c in columns]
        self.reordered = bool(reordered)
        self.near = [dict(n) for n in near]

    def __reduce__(self):  # survives the GUI's worker processes (pickle)
        args = (str(self), self.previous, self.accumulated, self.columns, self.reordered, self.near, self.reproduces)
        return (type(self), args)


def default_audit_dir() -> str:
    """``OPTRR_AUDIT_DIR`` when set, else the per-user data folder ``user_data_dir("OptRR")/audit``
    (platformdirs; e.g. ~/.local/share/OptRR/audit on Linux), created with permissions 0700 if missing."""
    from platformdirs import user_data_dir

    env = os.environ.get(AUDIT_DIR_ENV)
    if env:
        return env
    folder = os.path.join(user_data_dir("OptRR", appauthor=False), "audit")
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
    except OSError as exc:
        raise InputError(
            f"cannot create the audit folder {folder}: {exc.strerror or exc}; name one with --audit-dir"
        ) from None
    return folder


def audit_folder(audit_dir=None) -> str:
    """The folder the user named (``audit_dir``), else :func:`default_audit_dir`; it must exist."""
    folder = os.fspath(audit_dir) if audit_dir is not None else default_audit_dir()
    if not os.path.isdir(folder):
        source = "" if audit_dir is not None else f" (from {AUDIT_DIR_ENV})"
        raise InputError(f"audit folder {folder}{source} does not exist; create it or choose another")
    return os.path.abspath(folder)


def audit_path(folder) -> str:
    return os.path.join(os.fspath(folder), AUDIT_NAME)


def internal_report_path(folder, output_path, stamp: str) -> str:
    """``OUTPUT.XXXXXXXX.STAMP.internal-report.html`` in the audit folder, XXXXXXXX the first 8 hex digits of the
    SHA-256 of the release's absolute path (one audit folder serves every project, so releases of the same name in
    different folders get different internal reports) and STAMP the release's start (``20261126T181500Z``): every
    release keeps its own report, like its entry of the ledger (a weekly release to the same name, last week's
    files moved away, was refused for good by last week's report)."""
    import hashlib

    output = os.path.abspath(os.fspath(output_path))
    tag = hashlib.sha256(output.encode("utf-8", "surrogateescape")).hexdigest()[:8]
    return os.path.join(os.fspath(folder), f"{os.path.basename(output)}.{tag}.{stamp}{INTERNAL_REPORT_SUFFIX}")


def file_stamp(created: str) -> str:
    """``2026-11-26T18:15:00Z`` -> ``20261126T181500Z`` (a time in a file name)."""
    return created.replace("-", "").replace(":", "")


def load_audit(path) -> dict:
    """The audit record at ``path`` (an empty one when the file does not exist yet)."""
    from ..io.json_file import read_json

    path = os.fspath(path)
    if not os.path.exists(path):
        return {"format": AUDIT_FORMAT, "format_version": AUDIT_VERSION, "releases": []}
    data = read_json(path, "audit record", damaged_hint="; it is damaged (the hospital's release history)")
    if not isinstance(data, dict) or data.get("format") != AUDIT_FORMAT or not isinstance(data.get("releases"), list):
        raise InputError(f"{path} is not an OptRR audit record; move it away or name another audit folder")
    version = data.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool) or version > AUDIT_VERSION:
        raise InputError(f"audit record {path} has format_version {version!r}, which this OptRR does not read")
    return data


def releases_of(audit: dict, input_sha256: str | None) -> list[dict]:
    """Earlier releases of the source with this SHA-256 (the ledger's rows)."""
    rows = [r for r in audit["releases"] if isinstance(r, dict)]
    return [r for r in rows if (r.get("input") or {}).get("sha256") == input_sha256]


#: A column's fingerprint is compared only when at least this many records were read...
FINGERPRINT_MIN_ROWS = 20
#: ... and the column holds at least this many distinct values (missing counted as one): an all-missing or constant
#: column is the same in unrelated files.
FINGERPRINT_MIN_DISTINCT = 2
#: Two independent keys of the records' multiset hash (pandas ``hash_key``: 16 bytes).
MULTISET_KEYS = ("optrr-multiset-1", "optrr-multiset-2")
#: The records' similarity sketch (:class:`RecordSketch`): a cut point is decided by the last SKETCH_WINDOW rows...
SKETCH_WINDOW = 4
#: ... giving chunks of at least SKETCH_MIN_CHUNK, about SKETCH_AVG_CHUNK and at most SKETCH_MAX_CHUNK rows...
SKETCH_MIN_CHUNK, SKETCH_AVG_CHUNK, SKETCH_MAX_CHUNK = 16, 32, 256
#: ... of which the SKETCH_K smallest chunk hashes are kept (bottom-K).
SKETCH_K = 256
#: The scheme of a stored sketch: sketches of other schemes (other chunking) are not compared.
SKETCH_SCHEME = "optrr-cdc-1"
#: A sketch is compared only with at least this many counting chunks...
SKETCH_MIN_CHUNKS = 4
#: ... covering at least this share of the rows read (too regular files are not compared).
SKETCH_MIN_COVERED = 0.5
#: A near repeat: at least this share of an earlier release's chunks found in this file, or of this file's in it
#: (in another order: at least this share of the records, a lower bound from the records' set sketches).
NEAR_REPEAT_SHARE = 0.5
#: The records' set sketch (:class:`RecordSet`): the SKETCH_K smallest hashes of the distinct records are stored;
#: the number of distinct records is estimated in memory from the DISTINCT_K smallest (exact below DISTINCT_K, a
#: relative error of about 1 / sqrt(DISTINCT_K) = 1.6 % above; from SKETCH_K's, 6 %, 1 file of only distinct
#: records in 20 would be estimated under SET_MIN_DISTINCT_SHARE and not compared).
DISTINCT_K = 4096
#: The scheme of a stored set sketch: set sketches of other schemes are not compared.
SET_SCHEME = "optrr-set-1"
#: A set sketch is compared only when at least this share of the rows read are distinct records (estimated):
#: unrelated samples of one population of few distinct records share most of their records.
SET_MIN_DISTINCT_SHARE = 0.9
_GOLDEN = 0x9E3779B97F4A7C15
_CUT_SPREAD = 0xD6E8FEB86659FD93
#: A cut passes with probability 2**-_CUT_BITS = 1 / (SKETCH_AVG_CHUNK - SKETCH_MIN_CHUNK) (a power of two).
_CUT_BITS = (SKETCH_AVG_CHUNK - SKETCH_MIN_CHUNK).bit_length() - 1


def _mix64(values):
    """splitmix64's finaliser on a uint64 array (wrapping arithmetic)."""
    import numpy as np

    z = np.asarray(values, dtype=np.uint64).copy()
    with np.errstate(over="ignore"):
        z ^= z >> np.uint64(30)
        z *= np.uint64(0xBF58476D1CE4E5B9)
        z ^= z >> np.uint64(27)
        z *= np.uint64(0x94D049BB133111EB)
        z ^= z >> np.uint64(31)
    return z


def _chunk_ends(candidates: list[int], rows: int) -> list[int]:
    """The last row of every complete chunk of ``rows`` rows starting at a cut: the first candidate (sorted row
    indices whose window hash passed) at least SKETCH_MIN_CHUNK rows into the chunk, else its SKETCH_MAX_CHUNK-th
    row. A loop per cut point; the rows after the last cut are an incomplete chunk."""
    from bisect import bisect_left

    ends: list[int] = []
    start = 0
    while start + SKETCH_MIN_CHUNK <= rows:
        i = bisect_left(candidates, start + SKETCH_MIN_CHUNK - 1)
        end = candidates[i] if i < len(candidates) else rows
        end = min(end, start + SKETCH_MAX_CHUNK - 1)
        if end >= rows:
            break
        ends.append(end)
        start = end + 1
    return ends


class RecordSketch:
    """An order-dependent similarity sketch of a sequence of records (their 64-bit row hashes), by content-defined
    chunking: a chunk ends where the sum of the last SKETCH_WINDOW row hashes (modulo 2**64, times an odd constant)
    has its top bits 0 (probability 1 / (SKETCH_AVG_CHUNK - SKETCH_MIN_CHUNK)), its length kept within
    SKETCH_MIN_CHUNK .. SKETCH_MAX_CHUNK. A cut depends only on the rows since the previous one, so rows added,
    removed or changed alter only the chunks around them, and the rows after the last cut are carried over to the
    next :meth:`add`: the result does not depend on how the rows were split into chunks when read. A chunk's hash is
    the sum of its row hashes each mixed with its position in the chunk (splitmix64's finaliser), finalised again. A
    chunk counts only with at least 2 distinct rows (runs of one record repeated, as in sorted files, are the same in
    unrelated files). Kept: the SKETCH_K smallest hashes of the counting chunks (bottom-K), their number, the rows
    they cover and the rows read; memory O(SKETCH_K + SKETCH_MAX_CHUNK) besides the rows given, vectorised (numpy)
    but for a loop per cut point."""

    def __init__(self):
        import numpy as np

        self._pending = np.empty(0, dtype=np.uint64)  # row hashes after the last cut
        self._bottom = np.empty(0, dtype=np.uint64)  # sorted, distinct
        self.chunks = 0
        self.covered = 0
        self.rows = 0

    def add(self, row_hashes) -> None:
        """Add the next rows' hashes (uint64, in row order)."""
        import numpy as np

        hashes = np.concatenate([self._pending, np.asarray(row_hashes, dtype=np.uint64)])
        self.rows += len(hashes) - len(self._pending)
        ends = _chunk_ends(self._candidates(hashes), len(hashes))
        done = ends[-1] + 1 if ends else 0
        self._count(hashes[:done], np.asarray(ends, dtype=np.int64))
        self._pending = hashes[done:].copy()

    @staticmethod
    def _candidates(hashes) -> list[int]:
        """Row indices (from SKETCH_WINDOW - 1 on) where the window of the last SKETCH_WINDOW rows allows a cut."""
        import numpy as np

        sums = np.concatenate([np.zeros(1, dtype=np.uint64), np.cumsum(hashes, dtype=np.uint64)])
        with np.errstate(over="ignore"):
            window = sums[SKETCH_WINDOW:] - sums[:-SKETCH_WINDOW]  # rows i - W + 1 .. i, modulo 2**64
            top = (window * np.uint64(_CUT_SPREAD)) >> np.uint64(64 - _CUT_BITS)  # top bits, spread by an odd factor
        return (np.flatnonzero(top == 0) + (SKETCH_WINDOW - 1)).tolist()

    def _count(self, hashes, ends) -> None:
        """Hash the chunks of ``hashes`` ending at ``ends`` and keep those that count."""
        import numpy as np

        if not len(ends):
            return
        starts = np.concatenate([[0], ends[:-1] + 1])
        lengths = ends - starts + 1
        position = np.arange(len(hashes), dtype=np.uint64) - np.repeat(starts, lengths).astype(np.uint64)
        with np.errstate(over="ignore"):
            mixed = _mix64(hashes + (position + np.uint64(1)) * np.uint64(_GOLDEN))
            chunk = _mix64(np.add.reduceat(mixed, starts) + lengths.astype(np.uint64))
        changes = np.concatenate([[0], np.cumsum(hashes[1:] != hashes[:-1])])
        counts = changes[ends] > changes[starts]  # a row differs from the one before it inside the chunk
        self.chunks += int(counts.sum())
        self.covered += int(lengths[counts].sum())
        self._bottom = np.union1d(self._bottom, chunk[counts])[:SKETCH_K]

    def result(self) -> dict | None:
        """The sketch for the audit record (with the incomplete last chunk; the state is not changed), None when
        fewer than FINGERPRINT_MIN_ROWS records were read: {"scheme", "chunks", "covered", "rows", "hashes": the
        bottom-K chunk hashes, sorted, as one blob of 16 hex digits each}."""
        import numpy as np

        if self.rows < FINGERPRINT_MIN_ROWS:
            return None
        last = RecordSketch()
        last._bottom, last.chunks, last.covered = self._bottom, self.chunks, self.covered
        if len(self._pending):
            last._count(self._pending, np.array([len(self._pending) - 1], dtype=np.int64))
        return {
            "scheme": SKETCH_SCHEME,
            "chunks": last.chunks,
            "covered": last.covered,
            "rows": self.rows,
            "hashes": last._bottom.astype(">u8").tobytes().hex(),
        }


class RecordSet:
    """An order-independent similarity sketch of the set of records (their 64-bit row hashes, each mixed again with
    splitmix64's finaliser, a bijection): the DISTINCT_K smallest distinct mixed hashes (bottom-K of the set, the
    same whatever the rows' order, repetition and chunking), of which :meth:`result` keeps the SKETCH_K smallest and
    the number of distinct records (exact below DISTINCT_K, else (DISTINCT_K - 1) / the largest kept hash as a share
    of 2**64). Memory O(DISTINCT_K) besides the rows given (32 KB), vectorised (numpy)."""

    def __init__(self):
        import numpy as np

        self._bottom = np.empty(0, dtype=np.uint64)  # sorted, distinct, at most DISTINCT_K
        self.rows = 0

    def add(self, row_hashes) -> None:
        """Add the next rows' hashes (uint64, in any order)."""
        import numpy as np

        mixed = _mix64(np.asarray(row_hashes, dtype=np.uint64) ^ np.uint64(_GOLDEN))
        self.rows += len(mixed)
        if len(self._bottom) >= DISTINCT_K:
            mixed = mixed[mixed < self._bottom[-1]]  # only what can enter the bottom-K
        self._bottom = np.union1d(self._bottom, mixed)[:DISTINCT_K]

    def distinct(self) -> int:
        """The number of distinct records read (estimated from the bottom-K when it is full; at most the rows)."""
        if len(self._bottom) < DISTINCT_K:
            return len(self._bottom)
        return min(self.rows, round((DISTINCT_K - 1) * 2.0**64 / (float(self._bottom[-1]) + 1.0)))

    def result(self) -> dict | None:
        """The set sketch for the audit record, None when fewer than FINGERPRINT_MIN_ROWS records were read:
        {"scheme", "rows", "distinct", "hashes": the SKETCH_K smallest hashes, sorted, as one blob of 16 hex digits
        each}."""
        if self.rows < FINGERPRINT_MIN_ROWS:
            return None
        return {
            "scheme": SET_SCHEME,
            "rows": self.rows,
            "distinct": self.distinct(),
            "hashes": self._bottom[:SKETCH_K].astype(">u8").tobytes().hex(),
        }


class ColumnFingerprints:
    """SHA-256 per column of the records read (the source's string chunks, in row order): the same values give the
    same fingerprint whatever the file's bytes, format (CSV, Excel... wherever the reader gives the same texts) or
    chunking. The value sequence is encoded unambiguously as two streams hashed chunk by chunk: each value's UTF-8
    length (int32, little-endian; -1 for missing), and the values' bytes one after another.

    :meth:`result` gives only the comparable columns: none when fewer than FINGERPRINT_MIN_ROWS records were read,
    and none with fewer than FINGERPRINT_MIN_DISTINCT distinct values (missing counted as one). Internal only (the
    audit record): a fingerprint of a column with few values could be matched by guessing the column.

    :meth:`multiset` is one order-independent fingerprint of the whole records (over ``names``): each row hashed to
    64 bits twice (``pandas.util.hash_pandas_object`` of its values, missing distinct from "", columns combined by
    position, keys MULTISET_KEYS) and each hash summed over the rows modulo 2**64; the same records in any order and
    chunking give the same value, O(1) memory. It finds only the same records: a file with one row more, fewer or
    changed (a near-duplicate) is found by :meth:`sketch` instead, when its rows keep their order.

    :meth:`sketch` is the order-dependent similarity sketch of the records (:class:`RecordSketch`, over the first
    key's row hashes: one hashing for both): the same records in the same order with rows added, removed or
    changed share most of its chunks. :meth:`record_set` is the order-independent sketch of the set of records
    (:class:`RecordSet`, over the second key's row hashes): the same records in any order with rows added, removed
    or changed share most of it."""

    def __init__(self, names):
        import hashlib

        self.names = list(names)
        self.rows = 0
        self._lengths = {n: hashlib.sha256() for n in self.names}
        self._bytes = {n: hashlib.sha256() for n in self.names}
        self._first: dict[str, object] = {}
        self._varied: set[str] = set()
        self._sums = [0] * len(MULTISET_KEYS)
        self._sketch = RecordSketch()
        self._set = RecordSet()

    def add(self, table) -> None:
        """Hash the next chunk (a table of string columns holding every one of ``names``)."""
        for name in self.names:
            for chunk in table.column(name).chunks:
                self._add_array(name, chunk)
        self._add_rows(table)
        self.rows += table.num_rows

    def _add_rows(self, table) -> None:
        """Add the chunk's row hashes to the multiset sums (modulo 2**64), the first key's to the sketch and the
        second key's to the set sketch."""
        import numpy as np
        import pyarrow as pa
        from pandas.util import hash_pandas_object

        if table.num_rows == 0 or not self.names:
            return
        part = table.select(self.names)
        part = part.cast(pa.schema([pa.field(n, pa.string()) for n in self.names])).to_pandas()
        for i, key in enumerate(MULTISET_KEYS):
            hashes = hash_pandas_object(part, index=False, hash_key=key).to_numpy()
            self._sums[i] = (self._sums[i] + int(hashes.sum(dtype=np.uint64))) % 2**64
            if i == 0:
                self._sketch.add(hashes)
            else:
                self._set.add(hashes)

    def _add_array(self, name: str, arr) -> None:
        import numpy as np
        import pyarrow as pa
        import pyarrow.compute as pc

        if len(arr) == 0:
            return
        if not pa.types.is_string(arr.type):
            arr = pc.cast(arr, pa.string())
        lengths = pc.fill_null(pc.binary_length(arr), -1).to_numpy(zero_copy_only=False)
        self._lengths[name].update(np.ascontiguousarray(lengths, dtype="<i4"))
        offsets = np.frombuffer(arr.buffers()[1], dtype=np.int32, count=len(arr) + 1, offset=4 * arr.offset)
        start, end = int(offsets[0]), int(offsets[-1])
        if arr.null_count and end - start != int(lengths[lengths > 0].sum()):
            arr = pc.fill_null(arr, "")  # missing slots that hold bytes (legal in Arrow): hash the values only
            offsets = np.frombuffer(arr.buffers()[1], dtype=np.int32, count=len(arr) + 1, offset=4 * arr.offset)
            start, end = int(offsets[0]), int(offsets[-1])
        if end > start:
            self._bytes[name].update(memoryview(arr.buffers()[2])[start:end])
        self._note_distinct(name, arr)

    def _note_distinct(self, name: str, arr) -> None:
        """Whether the column has shown two distinct values yet (missing is one); cheap once it has."""
        import pyarrow.compute as pc

        if name in self._varied:
            return
        first = self._first.setdefault(name, arr[0].as_py())
        if first is None:
            varied = arr.null_count < len(arr)
        else:
            varied = arr.null_count > 0 or not pc.all(pc.equal(arr, first)).as_py()
        if varied:
            self._varied.add(name)

    def result(self) -> dict[str, str]:
        """{column: fingerprint (64 hex digits)} of the comparable columns, in column order."""
        import hashlib

        if self.rows < FINGERPRINT_MIN_ROWS:
            return {}
        return {
            n: hashlib.sha256(b"optrr-records-v1" + self._lengths[n].digest() + self._bytes[n].digest()).hexdigest()
            for n in self.names
            if n in self._varied
        }

    def multiset(self) -> str | None:
        """The records' multiset hash (32 hex digits: the two sums), None when fewer than FINGERPRINT_MIN_ROWS
        records were read or no column varies (constant records are the same in unrelated files)."""
        if self.rows < FINGERPRINT_MIN_ROWS or not self._varied:
            return None
        return "".join(f"{s:016x}" for s in self._sums)

    def sketch(self) -> dict | None:
        """The records' similarity sketch (:meth:`RecordSketch.result`), None when fewer than FINGERPRINT_MIN_ROWS
        records were read."""
        return self._sketch.result()

    def record_set(self) -> dict | None:
        """The records' set sketch (:meth:`RecordSet.result`), None when fewer than FINGERPRINT_MIN_ROWS records were
        read."""
        return self._set.result()


def fingerprints_of(entry: dict) -> dict[str, str]:
    """{column: fingerprint} of an audit entry (empty for entries written before fingerprints existed)."""
    found = (entry.get("input") or {}).get("column_fingerprints")
    return {str(k): v for k, v in found.items() if isinstance(v, str)} if isinstance(found, dict) else {}


def multiset_of(entry: dict) -> str | None:
    """The records' multiset hash of an audit entry (None for entries written before it existed)."""
    found = (entry.get("input") or {}).get("records_multiset")
    return found if isinstance(found, str) else None


def sketch_of(entry: dict):
    """(bottom-K chunk hashes as a sorted uint64 array, counting chunks) of an audit entry's records sketch when it
    can be compared (:data:`SKETCH_SCHEME`; at least FINGERPRINT_MIN_ROWS rows, SKETCH_MIN_CHUNKS counting chunks
    covering at least SKETCH_MIN_COVERED of the rows: a too regular file, e.g. sorted with long runs of one record,
    is not compared), else None (also for entries written before sketches existed, or damaged)."""
    stored = _stored_sketch(entry, "records_sketch", SKETCH_SCHEME, ("chunks", "covered", "rows"))
    if stored is None:
        return None
    hashes, (chunks, covered, rows) = stored
    if rows < FINGERPRINT_MIN_ROWS or chunks < SKETCH_MIN_CHUNKS or covered < SKETCH_MIN_COVERED * rows:
        return None
    return hashes, chunks


def set_sketch_of(entry: dict):
    """(bottom-K hashes of the distinct records as a sorted uint64 array, share of the rows that are distinct
    records) of an audit entry's set sketch (:class:`RecordSet`) when it can be compared (:data:`SET_SCHEME`; at
    least FINGERPRINT_MIN_ROWS rows, at least SET_MIN_DISTINCT_SHARE of them distinct: unrelated samples of one
    population of few distinct records share most of them), else None (also for entries written before set
    sketches existed, or damaged)."""
    stored = _stored_sketch(entry, "records_set_sketch", SET_SCHEME, ("rows", "distinct"))
    if stored is None:
        return None
    hashes, (rows, distinct) = stored
    if rows < FINGERPRINT_MIN_ROWS or distinct < SET_MIN_DISTINCT_SHARE * rows:
        return None
    return hashes, min(1.0, distinct / rows)


def _stored_sketch(entry: dict, key: str, scheme: str, counts: tuple[str, ...]):
    """(hashes as a uint64 array, the integers ``counts``) of the sketch ``input.KEY`` of an audit entry when it is
    of ``scheme`` and readable, else None."""
    import numpy as np

    found = (entry.get("input") or {}).get(key)
    if not isinstance(found, dict) or found.get("scheme") != scheme:
        return None
    try:
        numbers = tuple(int(found[k]) for k in counts)
        hashes = np.frombuffer(bytes.fromhex(found["hashes"]), dtype=">u8").astype(np.uint64)
    except (KeyError, TypeError, ValueError):
        return None
    return hashes, numbers


def near_shares(ours, theirs) -> tuple[float, float]:
    """(share of ``theirs``'s chunks found in ``ours``, share of ``ours``'s found in ``theirs``), two :func:`sketch_of`
    results (or two :func:`set_sketch_of` results: shares of distinct records), by bottom-K containment: below t,
    the smaller of the two sketches' largest hashes (a sketch holding fewer than SKETCH_K hashes is its whole set: no
    bound), each sketch holds every hash of its set, so the share of one sketch's hashes below t found in the other
    estimates the containment of its set in the other's (exact when both sketches are whole sets). A share of chunks
    of about 32 rows is a lower bound of the share of records: one changed row changes its whole chunk."""
    import numpy as np

    (a, _a_chunks), (b, _b_chunks) = ours, theirs

    def bound(x) -> float:
        return float(x[-1]) if len(x) >= SKETCH_K else np.inf

    t = min(bound(a), bound(b))

    def found(x, y) -> float:
        below = x[x <= t] if np.isfinite(t) else x
        return float(np.count_nonzero(np.isin(below, y))) / len(below) if len(below) else 0.0

    return found(b, a), found(a, b)


def set_shares(ours, theirs) -> tuple[float, float]:
    """(share of the rows of ``theirs`` whose record is in ``ours``, share of ``ours``'s in ``theirs``), two
    :func:`set_sketch_of` results, as lower bounds: a file's distinct records found in the other (:func:`near_shares`)
    are at least that many of its rows, so each share of distinct records times the file's share of distinct records
    (at least SET_MIN_DISTINCT_SHARE) bounds its share of rows from below (up to the sketches' estimation error)."""
    earlier, this = near_shares(ours, theirs)
    return earlier * theirs[1], this * ours[1]


def near_repeat(sketch, record_set, earlier: dict) -> dict | None:
    """The shares of records in common with the ``earlier`` audit entry when it is a near repeat (either share at
    least NEAR_REPEAT_SHARE): {"earlier_share", "this_share", "reordered"}, from the records sketches (``sketch``,
    :func:`sketch_of`: in the same order, "reordered" False) when they find it, else from the set sketches
    (``record_set``, :func:`set_sketch_of`, :func:`set_shares`: in any order, "reordered" True); None otherwise or
    when neither pair can be compared."""
    for ours, read, shares, reordered in (
        (sketch, sketch_of, near_shares, False),
        (record_set, set_sketch_of, set_shares, True),
    ):  # the earlier entry's set sketch is parsed only when the order sketches found nothing
        theirs = read(earlier) if ours is not None else None
        if theirs is not None:
            earlier_share, this_share = shares(ours, theirs)
            if max(earlier_share, this_share) >= NEAR_REPEAT_SHARE:
                return {"earlier_share": earlier_share, "this_share": this_share, "reordered": reordered}
    return None


def repeats_of(audit: dict, entry: dict) -> tuple[list[dict], list[str], bool, list[dict]]:
    """The earlier releases of the same records as ``entry`` (same input SHA-256, a column fingerprint in common,
    the same records' multiset hash, or a near repeat by the records or set sketches), in ledger order; the names of
    ``entry``'s columns found identical in those of another input; whether an earlier release was found by the
    multiset hash only (another order); and the near repeats, found by the sketches only: {"created", "file",
    "earlier_share": share of that release's records found in ``entry``'s, "this_share": of ``entry``'s found in
    it, "reordered": found by the set sketches, not in the same order}, when either share is at least
    NEAR_REPEAT_SHARE (:func:`near_repeat`; too regular files, :func:`sketch_of`, and files of too few distinct
    records, :func:`set_sketch_of`, are not compared that way)."""
    ours = fingerprints_of(entry)
    by_print = {v: k for k, v in ours.items()}
    sha = (entry.get("input") or {}).get("sha256")
    multiset = multiset_of(entry)
    sketch, record_set = sketch_of(entry), set_sketch_of(entry)
    found, columns, reordered, near = [], set(), False, []
    for r in audit["releases"]:
        if not isinstance(r, dict):
            continue
        same = {by_print[v] for v in fingerprints_of(r).values() if v in by_print}
        same_input = sha is not None and (r.get("input") or {}).get("sha256") == sha
        same_records = multiset is not None and multiset_of(r) == multiset
        if same or same_input or same_records:
            found.append(r)
        elif (shares := near_repeat(sketch, record_set, r)) is not None:
            found.append(r)
            near.append({"created": r.get("created", "?"), "file": (r.get("input") or {}).get("file", "?"), **shares})
        if not same_input:
            columns |= same
            reordered |= same_records and not same
    return found, [c for c in ours if c in columns], reordered, near


def release_entry(audit: dict, output_sha256: str) -> dict:
    """The audit entry of the release whose data file has this SHA-256 (the newest such; parallel runs may have
    appended after it, so never simply the last one)."""
    for r in reversed(audit["releases"]):
        if isinstance(r, dict) and r.get("output_sha256") == output_sha256:
            return r
    raise InputError(f"the audit record has no release with SHA-256 {output_sha256}")


#: What the accumulated epsilon is, wherever it is said: the sum is exact for the records in every release found.
ACCUMULATED_NOTE = "sum over the releases, identical ones once; less for records in only some of them"


def accumulated_epsilon(previous: list[dict], this_release: float = 0.0) -> float:
    """Basic composition: the sum of the whole-record epsilons of every release of the same records, a release
    that repeats an earlier one's noise counted once: its data file byte for byte the earlier one's, or a keyed
    release of the same input made the same way (:func:`same_noise_key`; in another file format, say)."""
    seen: set = set()
    total = 0.0
    for r in previous:
        keys = [k for k in (r.get("output_sha256"), same_noise_key(r)) if k is not None]
        if any(k in seen for k in keys):
            seen.update(keys)
            continue
        seen.update(keys)
        total += float(r.get("overall_epsilon", 0.0))
    return float(total + this_release)


def same_noise_key(r: dict) -> str | None:
    """What makes a keyed release's noise, from its audit entry (:func:`noise_key`), or None for a release with OS
    randomness (fresh noise each time)."""
    source = r.get("input") or {}
    return noise_key(
        source.get("sha256"), r.get("randomness") or {}, r.get("tool"), r.get("configuration"), source.get("reader"),
        bool(r.get("shuffled")),
    )


def noise_key(input_sha256, randomness: dict, tool, config, reader, shuffled: bool) -> str | None:
    """The one text of what makes a keyed release's noise: the input's SHA-256, the key's fingerprint and stream
    scheme, the configuration, reader options, shuffling and OptRR version (:mod:`.randomness`), as an audit entry
    stores them; None without a key (OS randomness: fresh noise each time)."""
    from .manifest import json_safe

    if not randomness.get("key_fingerprint"):
        return None
    stored = json.loads(json.dumps(json_safe({"tool": tool, "config": config, "reader": reader})))
    return json.dumps(
        [
            input_sha256,
            randomness.get("key_fingerprint"),
            randomness.get("stream_scheme"),
            stored["tool"],
            stored["config"],
            stored["reader"],
            bool(shuffled),
        ],
        sort_keys=True,
    )


def near_sentence(near: list[dict]) -> str:
    """The closest near repeat (the largest share) in words: "at least about 97 % of the records of the release of
    DATE (file X) are in this file again, in the same order", or, when this file's records are the larger share,
    "at least about 97 % of this file's records were in the release of DATE (file X), in the same order" (a share of
    unchanged runs of about 32 records, :func:`near_shares`: a lower bound of the records'); "found whatever their
    order" when it was found by the set sketches (``"reordered"``, :func:`set_shares`: a lower bound too; a file
    edited in place in many rows is found that way too, so "in another order" would not always be true)."""
    best = max(near, key=lambda n: max(n["earlier_share"], n["this_share"]))
    release = f"the release of {best['created']} (file {best['file']})"
    if best["earlier_share"] >= best["this_share"]:
        share, where = best["earlier_share"], f"of the records of {release} are in this file again"
    else:
        share, where = best["this_share"], f"of this file's records were in {release}"
    # the set sketches find records whatever their order: re-sorted, or in place with many rows edited
    return f"at least about {100 * share:.0f} % {where}, " + ("found whatever their order" if best.get("reordered")
                                                              else "in the same order")


def reproduced_release(previous: list[dict], key: str | None) -> dict | None:
    """The earlier release (audit entry) that this run would reproduce: the newest whose :func:`same_noise_key` is
    this run's :func:`noise_key` ``key`` (the same noise, in whatever output format); None when there is none
    (``key`` None: OS randomness draws fresh noise)."""
    if key is None:
        return None
    return next((r for r in reversed(previous) if same_noise_key(r) == key), None)


def reproduction_message(ledger: list[dict], reproduced: dict, near=()) -> str:
    """Why a keyed reproduction is still refused: it writes a copy of an earlier release, adding nothing. ``ledger``:
    every release of the same records (:func:`repeats_of` of the reproduced entry, ``near`` its near repeats)."""
    total = accumulated_epsilon(ledger)
    what = f"the release of {reproduced.get('created', '?')} (file {(reproduced.get('input') or {}).get('file', '?')})"
    return (
        f"this run would reproduce the records and noise of {what} (the same input, key, configuration and OptRR "
        f"version: the same noise, whatever the output format), so it adds nothing: the accumulated whole-record "
        f"epsilon stays {accumulated_words(f'{total:.6g}', bool(near))}; confirm with --allow-repeat to write that copy"
    )


def repeat_message(
    previous: list[dict],
    this_epsilon: float,
    columns: list[str] | None = None,
    reordered: bool = False,
    near: list[dict] | None = None,
) -> str:
    """Why a repeat is refused: the earlier releases (the last three named by date and input file, then how many
    more), the columns found identical when they were recognised by their records (``columns``), or the same records
    in another order (``reordered``: found by the multiset hash only), the closest near repeat (``near``: found by
    the records or set sketches only, :func:`near_sentence`), and the accumulated epsilon."""
    total = accumulated_epsilon(previous, this_epsilon)
    dates = ", ".join(f"{r.get('created', '?')} of {(r.get('input') or {}).get('file', '?')}" for r in previous[-3:])
    if len(previous) > 3:
        dates += f", and {len(previous) - 3} earlier"
    what = "this input was"
    if columns:
        named = ", ".join(repr(c) for c in columns)
        what = f"the same records (column(s) {named} identical, value by value) were"
    elif reordered:
        what = "the same records in another order were"
    elif near and len(near) == len(previous):
        what = "records of this file were"
    if near:
        what = f"{near_sentence(near)}: {what}"
    return (
        f"{what} released {len(previous)} time(s) before ({dates}); another release with fresh noise "
        f"brings the accumulated whole-record epsilon to {accumulated_words(f'{total:.6g}', bool(near))} (a "
        "reproduction with the same key and configuration repeats the same noise and adds nothing); confirm with "
        "--allow-repeat if that is intended"
    )


def accumulated_words(number: str, near: bool) -> str:
    """The accumulated epsilon (``number``, already formatted) in words: "at most" when the releases were found as
    near repeats (each shares only part of the records), and what the sum is (ACCUMULATED_NOTE)."""
    return f"{'at most ' if near else ''}{number} ({ACCUMULATED_NOTE})"


def audit_text(audit: dict) -> str:
    """The audit record as indented JSON, each configuration's ``mechanism`` on one line (``indented_json``)."""
    from .manifest import indented_json

    return indented_json(audit)


@contextmanager
def locked(path, timeout: float = LOCK_TIMEOUT):
    """Hold the exclusive lock of the audit record at ``path`` (``PATH.lock``) for a read-modify-write."""
    from filelock import FileLock, Timeout

    lock = FileLock(os.fspath(path) + LOCK_SUFFIX, timeout=timeout)
    try:
        lock.acquire()
    except Timeout:
        raise InputError(
            f"audit record {path} stayed locked by another OptRR run for {timeout:.0f} s; try again when it has "
            f"finished (or remove {os.path.basename(path)}{LOCK_SUFFIX} if no OptRR is running)"
        ) from None
    try:
        yield
    finally:
        lock.release()


def append_release(path, entry: dict, allow_repeat: bool = True, this_epsilon: float | None = None) -> list[dict]:
    """Append ``entry`` to the audit record at ``path`` under its lock (read, append, atomic write) and return
    the ledger of its source (the earlier releases of the same records, :func:`repeats_of`, then this one).
    Without ``allow_repeat`` an earlier release of the same input (recorded meanwhile by another run), of the
    same records in another file (a column fingerprint or the records' multiset hash in common) or a near repeat
    (most of the records, in the same order by the records sketches or in any order by the set sketches) raises
    :class:`RepeatReleaseError` (nothing is written)."""
    from ..io.atomic import write_text_atomic

    path = os.fspath(path)
    with locked(path):
        audit = load_audit(path)
        previous, columns, reordered, near = repeats_of(audit, entry)
        if previous and not allow_repeat:
            eps = float(entry.get("overall_epsilon", 0.0)) if this_epsilon is None else float(this_epsilon)
            message = repeat_message(previous, eps, columns, reordered, near)
            total = accumulated_epsilon(previous, eps)
            raise RepeatReleaseError(message, previous, total, columns, reordered, near)
        audit["releases"].append(entry)
        write_text_atomic(path, audit_text(audit), private=True)
    return previous + [entry]


def withdraw_release(apath, entry: dict) -> None:
    """Take ``entry`` (as :func:`append_release` appended it) out of the audit record at ``apath``, under its
    lock: its release was refused after it was recorded."""
    from ..io.atomic import write_text_atomic

    stored = json.loads(audit_text(entry))
    with locked(apath):
        audit = load_audit(apath)
        others = [e for e in audit["releases"] if e != stored]
        if len(others) < len(audit["releases"]):
            audit["releases"] = others
            write_text_atomic(apath, audit_text(audit), private=True)


#: Bytes of an existing file read to recognise a key file or an audit record by what it holds.
SNIFF_BYTES = 4096


def held_by(path) -> str | None:
    """What makes the existing file at ``path`` one that no command overwrites whatever its name, else None: a
    secret key (a line of ``optrr keygen``'s key tag, as its reader finds it) or an OptRR audit record (its
    "format", whatever the file's name: a copy kept as a backup too). Every command's outputs and the GUI's release
    are checked with it (:func:`optrr_engine.io.atomic.check_new_output`'s ``recognise``)."""
    import re

    from .randomness import KEY_TAG

    try:
        with open(path, "rb") as fh:
            head = fh.read(SNIFF_BYTES).decode("ascii", "replace")
    except OSError:
        return None
    if any(line.split()[:1] == [KEY_TAG] for line in head.splitlines()):
        return "an OptRR secret key file (optrr keygen)"
    if re.search(r'"format"\s*:\s*"' + re.escape(AUDIT_FORMAT) + '"', head):  # a copy under any name too
        return "an OptRR audit record (the privacy ledger)"
    return None
