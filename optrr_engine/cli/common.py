"""Helpers shared by subcommands: parsing lists, printing JSON."""

from __future__ import annotations

import json
import math
import sys

from ..errors import InputError


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


def add_release_arguments(p) -> None:
    """The arguments every command reading a release shares: the file, its manifest, the hash check, --json."""
    p.add_argument("release", help="the perturbed data file")
    p.add_argument("--manifest", help="its manifest (default: RELEASE with .manifest.json)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--no-hash-check", action="store_true", help="do not verify the file against the manifest hash")


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
