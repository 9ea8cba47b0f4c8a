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
