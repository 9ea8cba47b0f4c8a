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


def encode_file(path: str, config, progress=None, cancel=None):
    """Codes (rows, k) of the perturbed columns of a whole file, as the release would encode them."""
    import numpy as np

    from optrr_engine.tasks import TaskControl

    ctl = TaskControl(progress, cancel)
    rd = engine_api.readers()
    codec_mod = engine_api.module("optrr_engine.release.codec")
    source = rd.open_source(path, rd.ReaderOptions.from_dict(config.input))
    codec = codec_mod.Codec(config, decimal=source.options.decimal or ".")
    parts, rows = [], 0
    for table in source.tables(codec.attributes):
        ctl.check()
        codes, _kept, _excluded = codec.encode_table(table, rows)
        parts.append(codes.astype(np.int64))
        rows += table.num_rows
        ctl.report(min(0.9, source.fraction_done()), f"encoded {rows:,} rows")
    return np.concatenate(parts) if parts else np.zeros((0, len(codec.attributes)), dtype=np.int64)


def clusters_design(path: str, config, epsilons, n_rows, tv: float, td: float, progress=None, cancel=None):
    """RR-Clusters (Domingo-Ferrer & Soria-Comas, Algorithm 1) on this file, for comparison in the mechanism
    panel: clusters of dependent columns (Cramer's V on the raw data) get joint GRR with eps_C = sum eps_i."""
    import time

    import numpy as np

    from optrr_engine.designs.result import Design
    from optrr_engine.errors import Cancelled, OptRRError

    from .design_summary import DesignSummary, summarise

    t0 = time.perf_counter()
    try:
        codes = encode_file(path, config, progress, cancel)
        if len(codes) == 0:
            return DesignSummary(method="clusters", ok=False, error="the file has no rows to measure dependence on")
        analysis = engine_api.module("optrr_engine.analysis")
        sizes = [len(c) for c in _labels(config)]
        plan = analysis.plan_rr_clusters(codes, sizes, list(epsilons), tv, td)
    except Cancelled:
        raise
    except OptRRError as exc:
        return DesignSummary(method="clusters", ok=False, error=str(exc), seconds=time.perf_counter() - t0)
    design = Design("clusters", plan.mechanism, np.asarray(epsilons, dtype=float))
    summary = summarise(design, n_rows or len(codes), time.perf_counter() - t0)
    groups = [c for c in plan.clusters if len(c) > 1]
    summary.releasable = False
    summary.note = (
        f"{len(groups)} cluster(s) of dependent columns (Tv = {tv:g} value combinations, Td = {td:g}); chosen from "
        "the raw data, which is outside the ε guarantee. For comparison only: not offered for release."
    )
    summary.clusters = plan.clusters
    return summary


def _labels(config) -> list[list]:
    codec_mod = engine_api.module("optrr_engine.release.codec")
    return [spec.labels for spec in codec_mod.Codec(config).specs]
