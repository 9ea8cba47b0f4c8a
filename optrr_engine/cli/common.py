"""Helpers shared by subcommands: parsing lists, printing JSON."""

from __future__ import annotations

import json
import math
import sys

from ..errors import InputError, OptRRError


def parse_list(text: str, kind=float, what: str = "value") -> list:
    items = [t.strip() for t in str(text).split(",")]
    if not items or any(t == "" for t in items):
        raise InputError(f"could not read the list of {what}s {text!r}: use comma-separated numbers like 1,2,0.5")
    out: list[float] = []
    for t in items:
        try:
            f = float(t)
        except ValueError:
            raise InputError(f"{what} {t!r} is not a number") from None
        if kind is int:
            if not math.isfinite(f) or f != int(f):
                raise InputError(f"{what} {t!r} is not a whole number")
            out.append(int(f))
        else:
            out.append(f)
    return out


#: The quoting rule of an option naming columns, for its help text.
NAMES_HELP = (
    "the whole value if it is one column name, else comma-separated names; a name with a comma goes in double "
    "quotes: '\"Weight, kg\",sex'"
)


def split_names(text: str, option: str) -> list[str]:
    """The names of a comma-separated list; a name holding a comma is in double quotes ("Weight, kg",sex)."""
    import csv

    names = next(csv.reader([str(text)], skipinitialspace=True), [])
    if not names or any(t.strip() == "" for t in names):
        raise InputError(f"could not read the attribute list {text!r} of {option}: use names like age,sex")
    return names


def quoted_list(names: list[str]) -> str:
    """``names`` as one shell word of a name list: ['Weight, kg', 'sex'] -> '"Weight, kg",sex'."""
    import csv
    import io
    import shlex

    buf = io.StringIO()
    csv.writer(buf, lineterminator="").writerow(names)
    return shlex.quote(buf.getvalue())


def shown_name(name: str) -> str:
    """A name as printed in a line that lists names: in double quotes when it holds a comma or has white space at
    its start or end (so that "Weight, kg, sex" cannot be read as three names), else as it is."""
    return f'"{name}"' if ("," in name or name != name.strip() or not name) else name


def shown_names(names: list[str]) -> str:
    """``names`` for a printed line: "Weight, kg", sex."""
    return ", ".join(shown_name(str(n)) for n in names)


def _rejoined(text: str, columns: list[str]) -> list[str] | None:
    """The columns an unquoted list makes when its comma-split pieces are joined back into names with commas."""
    from ..estimation.release_source import match_column  # (lazily: the estimation package is heavy to import)

    pieces, out, i = text.split(","), [], 0
    while i < len(pieces):
        for j in range(len(pieces), i, -1):
            name = match_column(",".join(pieces[i:j]), columns)
            if name is not None:
                out.append(name)
                i = j
                break
        else:
            return None
    return out


def _quote_hint(text: str, names: list[str], columns: list[str], option: str) -> str | None:
    """How to quote, when the list was split inside a column name with a comma (else None)."""
    if '"' in text:
        return None
    meant = _rejoined(text, columns)
    split = [c for c in (meant or []) if "," in c]
    if not split:
        typed = {n.strip() for n in names}
        split = [c for c in columns if "," in c and typed & {p.strip() for p in c.split(",")}]
    if not split:
        return None
    example = quoted_list(meant or [split[0]])
    return f"{split[0]!r} has a comma: put such a name in double quotes, e.g. {option} {example}"


def release_names(manifest: dict, text: str, option: str) -> list[str]:
    """The attributes an option names in a release: the whole value if it is one of its columns, else the split
    list; a name not found because a column's name was split at its comma says how to quote it."""
    from ..estimation.release_source import attribute_index, match_column

    columns = [str(a["name"]) for a in manifest["attributes"]] + [str(c) for c in manifest.get("kept_columns") or []]
    if match_column(str(text), columns) is not None:
        return [str(text)]
    names = split_names(text, option)
    try:
        attribute_index(manifest, names)
    except InputError as exc:
        hint = _quote_hint(str(text), names, columns, option)
        if hint is None:
            raise
        raise InputError(f"{exc}; {hint}") from None
    return names


def open_named_release(args, text: str, option: str) -> tuple[list[str], tuple]:
    """(the names ``text`` gives (:func:`release_names`), the (manifest, mechanism) of ``args.release``): the
    manifest is read once, the names matched against it, then the data file's SHA-256 checked unless
    --no-hash-check (a mistyped name is said without hashing the file). The first error is the first of: an
    unreadable list (when the release is missing), the missing release, the manifest's own, a name not in the
    release, the hash."""
    import os

    from ..estimation.release_estimate import default_manifest_path, open_release
    from ..release.manifest import check_data_hash

    if not os.path.exists(args.release):
        split_names(text, option)
    opened = open_release(args.release, args.manifest, check_hash=False)  # (the missing release's error)
    try:
        names = release_names(opened[0], text, option)
    except InputError:
        _check_columns_described(opened[0], args.manifest or default_manifest_path(args.release), args.release)
        raise
    if not args.no_hash_check:
        check_data_hash(opened[0], args.manifest or default_manifest_path(args.release), args.release)
    return names, opened


def _check_columns_described(manifest: dict, manifest_path, release) -> None:
    """A name the manifest lacks may be a manifest of another release: when the release file's header (read without
    hashing the file) lacks a column the manifest describes, that is the error to give."""
    import os

    from ..estimation.release_source import reader_options
    from ..io.readers import column_names

    described = [str(a["name"]) for a in manifest["attributes"]] + [str(c) for c in manifest.get("kept_columns") or []]
    try:
        header = set(column_names(release, reader_options()))
    except (OptRRError, OSError, ValueError):
        return  # the release's own reading error comes later, where it is read
    absent = [c for c in described if c not in header]
    if absent:
        raise InputError(
            f"manifest {os.path.basename(os.fspath(manifest_path))} does not describe {os.path.basename(release)}: "
            f"the release has no column {absent[0]!r}"
            + (f" (nor {len(absent) - 1} more of the manifest's)" if len(absent) > 1 else "")
            + "; give the manifest written with this release (--manifest)"
        )


def add_release_arguments(p) -> None:
    """The arguments every command reading a release shares: the file, its manifest, the hash check, --json."""
    p.add_argument("release", help="the perturbed data file")
    p.add_argument("--manifest", help="its manifest (default: RELEASE with .manifest.json)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--no-hash-check", action="store_true", help="do not verify the file against the manifest hash")


def audit_record(audit_dir=None) -> str | None:
    """The audit record a release would use (``optrr perturb``'s --audit-dir ``audit_dir``, else $OPTRR_AUDIT_DIR,
    else the per-user default); None when that folder does not exist."""
    from ..release.audit import audit_folder, audit_path

    try:
        return audit_path(audit_folder(audit_dir))
    except InputError:
        return None


def check_new_file(
    path, what: str, force: bool, protected=(), audit_dir=None, way_out: str = "choose another name"
) -> str:
    """The one rule of every command's output files: never, even with ``force``, one of the command's ``protected``
    (file, role) pairs (its inputs, its other outputs), the audit record (:func:`audit_record` of ``audit_dir``) or
    a file that holds a key or an audit record (:func:`~optrr_engine.release.audit.held_by`); an existing file only
    with ``force`` (:func:`~optrr_engine.io.atomic.check_new_output`). Returns ``path``."""
    from ..io.atomic import check_new_output
    from ..release.audit import held_by

    guarded = [*protected, (audit_record(audit_dir), "audit record")]
    return check_new_output(path, guarded, what, force, recognise=held_by, way_out=way_out)


def warn_not_private(warning: str | None) -> None:
    """A release that is not private (test seed): a loud warning on stderr, before any result."""
    if warning:
        print(f"optrr: WARNING: {warning}", file=sys.stderr)


def json_default(obj):
    import numpy as np

    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return float(obj)
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


def print_json(obj) -> None:
    from ..io.json_file import strict_json

    json.dump(strict_json(obj), sys.stdout, default=json_default, allow_nan=False)
    sys.stdout.write("\n")
