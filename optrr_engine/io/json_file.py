"""Reading a user's JSON file (configuration, manifest, design spec) with one-line errors that name it."""

from __future__ import annotations

import json
import os

from ..errors import InputError


def read_json(path, label: str, damaged_hint: str = ""):
    """Parse ``path``; errors read "<label> <path> does not exist / cannot be read / is not valid JSON"."""
    path = os.fspath(path)
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except FileNotFoundError:
        raise InputError(f"{label} {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{label} {path} cannot be read: {exc}") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{label} {path} is not valid JSON (line {exc.lineno}: {exc.msg}){damaged_hint}") from None
    except RecursionError:
        raise InputError(f"{label} {path} is nested too deeply to be read{damaged_hint}") from None


def strict_json(obj):
    """``obj`` with numpy values as Python ones and every non-finite number (NaN: not available; inf: unbounded,
    e.g. an erased table's error) as null: standard JSON, which JavaScript's JSON.parse and R's jsonlite read
    (Python's NaN / Infinity are not JSON)."""
    import math

    import numpy as np

    if isinstance(obj, dict):
        return {k: strict_json(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [strict_json(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return strict_json(obj.tolist())
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj
