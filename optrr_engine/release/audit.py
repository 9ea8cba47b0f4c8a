"""The hospital's internal audit record ``optrr-audit.json`` and its privacy ledger (docs/formats.md).

A release has two records. The manifest goes to the recipient and says only what analysis needs; this
audit record stays with the hospital, in a folder it chooses (by default beside the configuration file),
and holds what must never travel with a release: the input file's name, path, size and SHA-256, the key's
fingerprint, the full configuration, the row counts of the raw file, and the history of every release
made from that folder.

Ledger: releases of the same source are found by the input's SHA-256. Randomizing the same records twice
with independent noise costs the sum of the whole-record epsilons (basic sequential composition), so a
second release of a source needs an explicit confirmation and the accumulated epsilon is shown.
"""

from __future__ import annotations

import json
import os

from ..errors import InputError

AUDIT_NAME = "optrr-audit.json"
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


def audit_folder(config, input_path, audit_dir=None) -> str:
    """The folder the user named, else the configuration file's folder, else the input's folder."""
    if audit_dir is not None:
        folder = os.fspath(audit_dir)
        if not os.path.isdir(folder):
            raise InputError(f"audit folder {folder} does not exist; create it or choose another")
        return os.path.abspath(folder)
    if isinstance(config, (str, os.PathLike)):
        return os.path.dirname(os.path.abspath(os.fspath(config)))
    return os.path.dirname(os.path.abspath(os.fspath(input_path)))


def audit_path(folder) -> str:
    return os.path.join(os.fspath(folder), AUDIT_NAME)


def internal_report_path(folder, output_path) -> str:
    return os.path.join(os.fspath(folder), os.path.basename(os.fspath(output_path)) + INTERNAL_REPORT_SUFFIX)


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


def releases_of(audit: dict, input_sha256: str) -> list[dict]:
    """Earlier releases of the source with this SHA-256 (the ledger's rows)."""
    rows = [r for r in audit["releases"] if isinstance(r, dict)]
    return [r for r in rows if (r.get("input") or {}).get("sha256") == input_sha256]


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
