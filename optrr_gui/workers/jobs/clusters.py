"""Job of the mechanism panel's RR-Clusters row: the data pass over the file and the cluster plan.

The data pass (read and encode every row) depends only on the file and the perturbed columns' coding, not on
the epsilons: its result is kept per (file, its size and modification time, reader options, column coding) in
the process that ran it, so an epsilon edit re-plans the clusters without reading the file again.

The module is imported on the UI thread when the first design request is sent; the analysis package and the
readers are imported by the functions, in the worker process that runs them.
"""

from __future__ import annotations

import json
import os
import threading
import time

import numpy as np

from optrr_engine.designs.result import Design
from optrr_engine.errors import Cancelled, OptRRError
from optrr_engine.release.codec import Codec
from optrr_engine.tasks import TaskControl

from ...state.design_summary import DesignSummary, summarise

_CACHE_LOCK = threading.Lock()
_CACHE: dict = {}  # at most one entry: {key: codes}


def data_key(path: str, config) -> str:
    """What the data pass depends on: the file (path, size, modification time), the reader options and the
    coding of the perturbed columns (never their epsilons)."""
    st = os.stat(path)
    columns = []
    for c in config.perturbed():
        d = c.to_dict()
        for privacy in ("epsilon", "weight"):
            d.pop(privacy, None)
        columns.append(d)
    return json.dumps([os.path.abspath(path), st.st_size, st.st_mtime_ns, config.input, columns], default=str)


def encoded_codes(path: str, config, progress=None, cancel=None):
    """:func:`encode_file`, reused while :func:`data_key` is unchanged (the same array object)."""
    key = data_key(path, config)
    with _CACHE_LOCK:
        if key in _CACHE:
            return _CACHE[key]
    codes = encode_file(path, config, progress, cancel)
    codes.setflags(write=False)  # shared between calls
    with _CACHE_LOCK:
        _CACHE.clear()
        _CACHE[key] = codes
    return codes


def encode_file(path: str, config, progress=None, cancel=None):
    """Codes (rows, k) of the perturbed columns of a whole file, as the release would encode them."""
    from optrr_engine.io.readers import ReaderOptions, open_source  # in the worker: pyarrow

    ctl = TaskControl(progress, cancel)
    source = open_source(path, ReaderOptions.from_dict(config.input))
    codec = Codec(config, decimal=source.options.decimal or ".")
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
    from optrr_engine.analysis import plan_rr_clusters  # in the worker (~50 ms of imports)

    t0 = time.perf_counter()
    try:
        codes = encoded_codes(path, config, progress, cancel)
        if len(codes) == 0:
            return DesignSummary(method="clusters", ok=False, error="the file has no rows to measure dependence on")
        sizes = [len(spec.labels) for spec in Codec(config).specs]
        plan = plan_rr_clusters(codes, sizes, list(epsilons), tv, td)
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
