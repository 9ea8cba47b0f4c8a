"""The engine functions the GUI calls, imported lazily (start-up stays fast). A feature whose engine module is
missing raises :class:`FeatureUnavailable` with a message the window shows as is; nothing is faked.
"""

from __future__ import annotations

import importlib


class FeatureUnavailable(RuntimeError):
    """An engine module the feature needs is not installed / not written yet."""


_FEATURES = {
    "optrr_engine.io.readers": "reading data files",
    "optrr_engine.release.config": "release configurations",
    "optrr_engine.release.schema": "column detection (schema inference)",
    "optrr_engine.release.codec": "encoding columns",
    "optrr_engine.release.perturb": "perturbing and exporting a file",
    "optrr_engine.release.manifest": "reading release manifests",
    "optrr_engine.estimation": "estimating distributions from a release",
    "optrr_engine.analysis": "analysing a release (tests and tables)",
    "optrr_engine.compare": "the comparison harness",
}


def module(name: str):
    """Import an engine module or raise FeatureUnavailable naming the feature."""
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        missing = getattr(exc, "name", None) or ""
        if missing and not name.startswith(missing) and not missing.startswith("optrr_engine"):
            raise  # a real dependency problem, not a missing engine module
        feature = _FEATURES.get(name, name)
        raise FeatureUnavailable(f"{feature} is not available yet in this build ({name} is missing)") from None


def available(name: str) -> bool:
    try:
        module(name)
    except FeatureUnavailable:
        return False
    return True


def readers():
    return module("optrr_engine.io.readers")


def reader_options(d: dict | None):
    """``ReaderOptions`` from a plain dict (None / missing keys = detect automatically)."""
    mod = readers()
    d = {k: v for k, v in (d or {}).items() if v not in (None, "")}
    return mod.ReaderOptions(**d) if d else None


def options_to_dict(options) -> dict:
    if options is None:
        return {}
    keys = ("delimiter", "encoding", "decimal", "sheet")
    return {k: getattr(options, k, None) for k in keys if getattr(options, k, None) not in (None, "")}
