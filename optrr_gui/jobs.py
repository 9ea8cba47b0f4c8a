"""Qt-free engine jobs of the release and analyse views (module-level, so that a worker process can run
them: see :mod:`.process_pool`)."""

from __future__ import annotations

from . import engine_api
from .state import ColumnState


def run_release(input_path, config, output_path, options: dict, progress=None, cancel=None) -> dict:
    """Worker: the engine's perturb_file; returns its manifest."""
    perturb = engine_api.module("optrr_engine.release.perturb")
    return perturb.perturb_file(
        input_path,
        config,
        output_path,
        seed=options.get("seed"),
        shuffle=options.get("shuffle", True),
        output_format=options.get("output_format"),
        keep_seed_in_manifest=options.get("keep_seed_in_manifest", False),
        progress=progress,
        cancel=cancel,
    )


def open_release_task(path: str, manifest_path: str | None, progress=None, cancel=None) -> dict:
    """Worker: load the manifest (checks the data file's hash) and rebuild the mechanism."""
    est = engine_api.module("optrr_engine.estimation.release_estimate")
    manifest_path = manifest_path or est.default_manifest_path(path)
    manifest, mechanism = est.open_release(path, manifest_path, check_hash=True)
    return {"manifest": manifest, "mechanism": mechanism, "manifest_path": manifest_path}


def estimate_task(path, names, manifest_path, method, confidence, opened, progress=None, cancel=None) -> dict:
    """Worker: the estimated marginal and, for two attributes, the chi-square tests."""
    estimation = engine_api.module("optrr_engine.estimation")
    est = estimation.estimate_release(
        path,
        list(names),
        manifest_path=manifest_path,
        method=method,
        confidence=confidence,
        progress=progress,
        cancel=cancel,
        opened=opened,
    )
    out = {"estimate": est, "chi2": None}
    if len(names) == 2:
        analysis = engine_api.module("optrr_engine.analysis.release_chi2")
        out["chi2"] = analysis.chi2_release(path, list(names), manifest_path=manifest_path, cancel=cancel)
    return out


def infer_columns(path: str, options: dict, progress=None, cancel=None) -> dict:
    """Worker: read the schema of a file; returns the columns as session states."""
    schema = engine_api.module("optrr_engine.release.schema")
    config = schema.infer_schema(path, engine_api.reader_options(options), progress=progress, cancel=cancel)
    return {"columns": [ColumnState.from_config(c) for c in config.columns]}
