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

Ledger: releases of the same source are found by the input's SHA-256. Randomizing the same records twice
with independent noise costs the sum of the whole-record epsilons (basic sequential composition), so a
second release of a source needs an explicit confirmation and the accumulated epsilon is shown.
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
    """The source was released before; releasing it again needs confirmation (``allow_repeat``)."""

    def __init__(self, message: str, previous: list, accumulated: float):
        super().__init__(message)
        self.previous = previous
        self.accumulated = accumulated

    def __reduce__(self):  # survives the GUI's worker processes (pickle)
        return (type(self), (str(self), self.previous, self.accumulated))


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


def release_entry(audit: dict, output_sha256: str) -> dict:
    """The audit entry of the release whose data file has this SHA-256 (the newest such; parallel runs may have
    appended after it, so never simply the last one)."""
    for r in reversed(audit["releases"]):
        if isinstance(r, dict) and r.get("output_sha256") == output_sha256:
            return r
    raise InputError(f"the audit record has no release with SHA-256 {output_sha256}")


def accumulated_epsilon(previous: list[dict], this_release: float = 0.0) -> float:
    """Basic composition: the sum of the whole-record epsilons of every release of the same records."""
    return float(sum(float(r.get("overall_epsilon", 0.0)) for r in previous) + this_release)


def repeat_message(previous: list[dict], this_epsilon: float) -> str:
    total = accumulated_epsilon(previous, this_epsilon)
    dates = ", ".join(str(r.get("created", "?")) for r in previous[-3:])
    return (
        f"this input was released {len(previous)} time(s) before ({dates}); another release with fresh noise "
        f"brings the accumulated whole-record epsilon to {total:.6g} (sum over the releases); confirm with "
        "--allow-repeat if that is intended"
    )


def audit_text(audit: dict) -> str:
    return json.dumps(audit, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


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
    the ledger of its source (the earlier releases of the same input, then this one). Without ``allow_repeat``
    a release of the same input recorded meanwhile by another run raises :class:`RepeatReleaseError`
    (nothing is written)."""
    from ..io.atomic import write_text_atomic

    path = os.fspath(path)
    with locked(path):
        audit = load_audit(path)
        previous = releases_of(audit, (entry.get("input") or {}).get("sha256"))
        if previous and not allow_repeat:
            eps = float(entry.get("overall_epsilon", 0.0)) if this_epsilon is None else float(this_epsilon)
            raise RepeatReleaseError(repeat_message(previous, eps), previous, accumulated_epsilon(previous, eps))
        audit["releases"].append(entry)
        write_text_atomic(path, audit_text(audit), private=True)
    return previous + [entry]
