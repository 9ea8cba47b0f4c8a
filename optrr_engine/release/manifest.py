"""The manifest ``OUTPUT.manifest.json``: everything a receiver needs to analyse a release correctly and to
check that the data file is the one described, and nothing about the raw file it came from (that goes into
the hospital's audit record, :mod:`.audit`). docs/formats.md lists every key.

Stable keys: ``format_version``, ``attributes`` (``name``, ``categories``, ``requested_epsilon``,
``achieved_epsilon``), ``overall_epsilon``, ``mechanism`` (``Mechanism.to_dict()`` plus ``method``), ``rows``,
``output_sha256``, ``shuffled``, ``randomness``. Every epsilon written is recomputed from the mechanism;
loading a manifest checks its format version, its keys, that its epsilons are the mechanism's, and the
SHA-256 of the data file. Version-1 manifests (which also named the input file and its hash) still load.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
import re

import numpy as np

from ..errors import InputError
from ..mechanism import Mechanism
from ..sampling.design import SamplingDesign
from ..tolerance import eps_equal

FORMAT_VERSION = 3
MANIFEST_SUFFIX = ".manifest.json"
REPORT_SUFFIX = ".report.html"
REQUIRED_KEYS = (
    "format_version",
    "attributes",
    "overall_epsilon",
    "mechanism",
    "rows",
    "output_sha256",
    "shuffled",
    "randomness",
)
#: Keys a version-1 manifest had instead of ``randomness``.
REQUIRED_KEYS_V1 = (*REQUIRED_KEYS[:-1], "input_sha256", "seeded")
ATTRIBUTE_KEYS = ("name", "categories", "requested_epsilon", "achieved_epsilon")
#: Relative tolerance between a manifest's epsilons and the ones recomputed from its mechanism.
EPSILON_TOLERANCE = 1e-9
_SHA = re.compile(r"^[0-9a-f]{64}$")


def manifest_path(output_path) -> str:
    return os.fspath(output_path) + MANIFEST_SUFFIX


def report_path(output_path) -> str:
    return os.fspath(output_path) + REPORT_SUFFIX


def tool_entry() -> dict:
    """Which program made a release (the manifest's and the audit record's ``tool``)."""
    from .. import __version__

    return {"name": "optrr", "version": __version__}


def json_safe(obj):
    """Plain JSON types (numpy values converted; non-finite floats as the strings "inf", "-inf", "nan")."""
    if isinstance(obj, dict):
        return {str(k): json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return json_safe(obj.tolist())
    if isinstance(obj, (np.bool_, bool)):
        return bool(obj)
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, (np.floating, float)):
        x = float(obj)
        return x if math.isfinite(x) else ("inf" if x > 0 else "-inf" if x < 0 else "nan")
    return obj


def utc_now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def build_manifest(
    *,
    codec,
    release_design,
    rows: int,
    output_path,
    output_format: str,
    output_sha256: str,
    shuffled: bool,
    randomness: dict,
    output_options: dict,
    created: str,
) -> dict:
    """The manifest sent with the release: what a recipient needs to analyse it, nothing about the raw file
    (no input name, size, hash, path, row count, reader options or dropped columns)."""
    design = release_design.design
    mech = design.mechanism
    achieved = mech.attribute_epsilons()
    requested = release_design.requested
    names = codec.attributes
    attributes = []
    for j, spec in enumerate(codec.specs):
        attributes.append(
            {
                "name": spec.name,
                "categories": list(spec.labels),
                "requested_epsilon": float(requested[j]),
                "achieved_epsilon": float(achieved[j]),
                "type": spec.type,
                "missing_category": spec.codebook()["missing_category"],
            }
        )
    changes = [{**c, "name": names[c["attribute"]]} for c in design.epsilon_changes()]
    manifest = {
        "format_version": FORMAT_VERSION,
        "tool": tool_entry(),
        "created": created,
        "output": {
            "file": os.path.basename(os.fspath(output_path)),
            "format": output_format,
            **output_options,
        },
        "output_sha256": output_sha256,
        "rows": int(rows),
        "attributes": attributes,
        "overall_epsilon": float(mech.overall_epsilon()),
        "sum_requested_epsilons": float(np.sum(requested)),
        "mechanism": {"method": design.method, **mech.to_dict()},
        "design": {
            "method_requested": release_design.method_requested,
            "method": design.method,
            "epsilon_changes": changes,
            "accept_changed_epsilons": bool(codec.config.accept_changed_epsilons),
            "budget": release_design.budget,
            "notes": list(release_design.notes),
            "info": design.info,
        },
        "codebook": codec.codebook(),
        "columns": list(codec.columns),
        "kept_columns": list(codec.kept),
        "shuffled": bool(shuffled),
        "randomness": dict(randomness),
    }
    return json_safe(manifest)


def build_audit_entry(
    *,
    manifest: dict,
    config: dict,
    input_path,
    input_format: str,
    input_sha256: str,
    rows_read: int,
    rows_excluded: dict,
    reader_options: dict,
    dropped_columns: list,
    chunk_rows: int,
    randomness: dict,
    files: dict,
    design_seconds: float,
    unlisted_values: dict | None = None,
) -> dict:
    """One release in the hospital's audit record (kept by the hospital, never sent)."""
    input_path = os.path.abspath(os.fspath(input_path))
    entry = {
        "created": manifest["created"],
        "tool": manifest["tool"],
        "input": {
            "file": os.path.basename(input_path),
            "path": input_path,
            "format": input_format,
            "bytes": os.path.getsize(input_path),
            "sha256": input_sha256,
            "reader": dict(reader_options),
        },
        "files": dict(files),
        "output_sha256": manifest["output_sha256"],
        "rows": manifest["rows"],
        "rows_read": int(rows_read),
        "rows_excluded": int(rows_read - manifest["rows"]),
        "rows_excluded_by_column": {k: int(v) for k, v in rows_excluded.items()},
        "unlisted_values_as_missing": {k: int(v) for k, v in (unlisted_values or {}).items()},
        "dropped_columns": list(dropped_columns),
        "kept_columns": manifest["kept_columns"],
        "overall_epsilon": manifest["overall_epsilon"],
        "attributes": [
            {k: a[k] for k in ("name", "requested_epsilon", "achieved_epsilon")} for a in manifest["attributes"]
        ],
        "method": manifest["design"]["method"],
        "design_seconds": float(design_seconds),
        "shuffled": manifest["shuffled"],
        "randomness": dict(randomness),
        "chunk_rows": int(chunk_rows),
        "configuration": config,
    }
    return json_safe(entry)


def indented_json(obj) -> str:
    """``obj`` as indented JSON, every value under a key "mechanism" (at any depth: the manifest's, a configuration's
    in the audit record) on one line. Its arrays, a large design's pattern tables of millions of numbers, indented
    one number per line, made a census release's manifest 40.7 MB instead of 7.8 MB and its audit record 56.7 MB."""
    compact: list[str] = []

    def swap(value):
        if isinstance(value, dict):
            out = {}
            for k, v in value.items():
                if k == "mechanism" and isinstance(v, (dict, list)):
                    compact.append(json.dumps(v, ensure_ascii=False, allow_nan=False, separators=(",", ":")))
                    out[k] = f"\u0000mechanism {len(compact) - 1}\u0000"
                else:
                    out[k] = swap(v)
            return out
        if isinstance(value, list):
            return [swap(v) for v in value]
        return value

    text = json.dumps(swap(obj), indent=2, ensure_ascii=False, allow_nan=False)
    for i, part in enumerate(compact):
        slot = json.dumps(f"\u0000mechanism {i}\u0000")
        if text.count(slot) != 1:  # a text of the data holding the slot itself: written fully indented instead
            return json.dumps(obj, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
        text = text.replace(slot, part)
    return text + "\n"


def manifest_text(manifest: dict) -> str:
    """The manifest as indented JSON, its ``mechanism`` on one line (:func:`indented_json`)."""
    return indented_json(manifest)


class HashMismatchError(InputError):
    """The data file's SHA-256 is not the manifest's ``output_sha256`` (a front end may add how to skip the check)."""


def _fail(path, what: str) -> InputError:
    return InputError(f"manifest {os.path.basename(os.fspath(path))} {what}")


def validate_manifest(manifest, path="manifest") -> dict:
    if not isinstance(manifest, dict):
        raise _fail(path, "is not a JSON object")
    if "format_version" not in manifest:
        raise _fail(path, "lacks the key 'format_version'; it is damaged or not an OptRR manifest")
    version = manifest["format_version"]
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise _fail(path, f"has an invalid format_version {version!r}")
    if version > FORMAT_VERSION:
        raise _fail(path, f"has format_version {version}, newer than this OptRR reads ({FORMAT_VERSION}); update OptRR")
    missing = [k for k in (REQUIRED_KEYS_V1 if version == 1 else REQUIRED_KEYS) if k not in manifest]
    if missing:
        raise _fail(path, f"lacks the key {missing[0]!r}; it is damaged or not an OptRR manifest")
    attrs = manifest["attributes"]
    if not isinstance(attrs, list) or not attrs:
        raise _fail(path, "has no attributes")
    for a in attrs:
        if not isinstance(a, dict) or any(k not in a for k in ATTRIBUTE_KEYS):
            raise _fail(path, f"has an attribute without {', '.join(ATTRIBUTE_KEYS)}")
        if not isinstance(a["categories"], list) or len(a["categories"]) < 2:
            raise _fail(path, f"lists fewer than 2 categories for attribute {a['name']!r}")
        if not all(isinstance(c, str) for c in a["categories"]) or len(set(a["categories"])) < len(a["categories"]):
            raise _fail(path, f"lists categories of attribute {a['name']!r} that are not distinct texts")
    names = [a["name"] for a in attrs]
    if not all(isinstance(n, str) for n in names) or len(set(names)) < len(names):
        raise _fail(path, "names its attributes with texts that are not distinct")
    rows = manifest["rows"]
    if not isinstance(rows, int) or isinstance(rows, bool) or rows < 0:
        raise _fail(path, f"has an invalid row count {rows!r}")
    for key in ("input_sha256", "output_sha256") if version == 1 else ("output_sha256",):
        if not isinstance(manifest[key], str) or not _SHA.match(manifest[key]):
            raise _fail(path, f"has an invalid {key}")
    for key in ("shuffled", "seeded") if version == 1 else ("shuffled",):
        if not isinstance(manifest[key], bool):
            raise _fail(path, f"has a non-boolean {key!r}")
    if version > 1 and (not isinstance(manifest["randomness"], dict)
                        or not isinstance(manifest["randomness"].get("private"), bool)):
        raise _fail(path, "has an invalid 'randomness' (an object with a boolean 'private')")
    mech = mechanism_from_manifest(manifest, path)
    sizes = [len(a["categories"]) for a in attrs]
    if mech.sizes.tolist() != sizes:
        raise _fail(path, "has a mechanism whose category counts differ from its attributes' categories")
    achieved = mech.attribute_epsilons()
    for a, eps in zip(attrs, achieved, strict=True):
        if not _close(a["achieved_epsilon"], eps):
            stated = a["achieved_epsilon"]
            raise _fail(path, f"states epsilon {stated!r} for {a['name']!r} but its mechanism gives {eps:.9g}")
    if not _close(manifest["overall_epsilon"], mech.overall_epsilon()):
        stated, actual = manifest["overall_epsilon"], mech.overall_epsilon()
        raise _fail(path, f"states overall_epsilon {stated!r} but its mechanism gives {actual:.9g}")
    return manifest


def _close(stated, actual: float) -> bool:
    if isinstance(stated, bool) or not isinstance(stated, (int, float)):
        return False
    return bool(eps_equal(float(stated), actual, EPSILON_TOLERANCE))


def mechanism_from_manifest(manifest: dict, path="manifest") -> Mechanism | SamplingDesign:
    """The mechanism exactly as released (rebuilt from its parameters)."""
    d = manifest.get("mechanism") if isinstance(manifest, dict) else None
    if not isinstance(d, dict):
        raise _fail(path, "has no mechanism description")
    try:
        if d.get("kind") == "sampling":
            return SamplingDesign.from_dict(d)
        return Mechanism.from_dict(d)
    except InputError as exc:
        raise _fail(path, f"has an invalid mechanism: {exc}") from None
    except (KeyError, TypeError, ValueError) as exc:
        raise _fail(path, f"has an invalid mechanism ({exc.__class__.__name__})") from None


def default_data_path(path, manifest: dict) -> str:
    path = os.fspath(path)
    if path.endswith(MANIFEST_SUFFIX):
        candidate = path[: -len(MANIFEST_SUFFIX)]
        if os.path.exists(candidate):
            return candidate
    out = manifest.get("output") or {}
    if isinstance(out, dict) and isinstance(out.get("file"), str):
        return os.path.join(os.path.dirname(os.path.abspath(path)), os.path.basename(out["file"]))
    raise _fail(path, "does not name its data file; give the data file's path")


def load_manifest(path, data_path=None, check_hash: bool = True) -> dict:
    """Read and validate a manifest; with ``check_hash`` the data file must have the stated SHA-256."""
    from ..io.json_file import read_json

    path = os.fspath(path)
    manifest = read_json(path, "manifest", damaged_hint="; it is damaged")
    validate_manifest(manifest, path)
    if check_hash:
        check_data_hash(manifest, path, data_path)
    return manifest


def check_data_hash(manifest: dict, path, data_path=None) -> None:
    """The data file of a validated ``manifest`` (read from ``path``; ``data_path``, default the one it names) must
    exist and have the stated SHA-256 (:class:`HashMismatchError` otherwise)."""
    from ..io.atomic import sha256_file

    path = os.fspath(path)
    data = os.fspath(data_path) if data_path is not None else default_data_path(path, manifest)
    if not os.path.exists(data):
        raise InputError(f"data file {data} described by manifest {os.path.basename(path)} does not exist")
    if not os.path.isfile(data):  # hashing a named pipe would wait forever
        raise InputError(
            f"data file {data} described by manifest {os.path.basename(path)} is not a regular file (a named pipe, "
            "device or folder); give the release's data file"
        )
    if sha256_file(data) != manifest["output_sha256"]:
        raise HashMismatchError(
            f"data file {os.path.basename(data)} does not match manifest {os.path.basename(path)} "
            "(SHA-256 differs): the file was changed or the manifest belongs to another release"
        )


def noise_columns(names, epsilons) -> list:
    """The columns released as pure noise: achieved epsilon exactly 0 (their values are drawn independently of the
    data; the utility design for named tables does this to the columns no table uses). Nothing about them, nor
    any table containing them, can be estimated."""
    return [n for n, e in zip(names, epsilons, strict=True) if float(e) == 0.0]


def noise_attributes(attributes: list[dict]) -> list:
    """:func:`noise_columns` of a manifest's ``attributes`` entries (their name and achieved epsilon)."""
    return noise_columns([a["name"] for a in attributes], [a.get("achieved_epsilon", 1.0) for a in attributes])
