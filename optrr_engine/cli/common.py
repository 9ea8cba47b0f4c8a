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
    out = []
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
    json.dump(obj, sys.stdout, default=json_default, allow_nan=True)
    sys.stdout.write("\n")
