"""Qt-free jobs of the Compare tab, all computed by the engine's comparison harness (``optrr_engine.compare``)
and estimation code; each returns plain data (DataFrames) that the view plots and exports.

- the paper's Figs. 1-4: whole-record epsilon of Kronecker / optimal / heuristic on random requests;
- AVD of 2- to 5-way marginals of the loaded data, every design at the same whole-record epsilon;
- the designs at one whole-record epsilon, each released from the file as the Design tab encodes it:
  measured against predicted error of 1-, 2- and 3-way tables (optrr_engine.compare.designs_on_data);
- the release preview: for the columns the user picks, their categories exactly as the release encodes them
  (recoding, bins, missing values of the Design tab) and the mechanism the release would use: original
  shares, expected perturbed shares and the estimate from one simulated perturbation with its interval.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from optrr_engine import compare as harness
from optrr_engine.designs import METHODS
from optrr_engine.estimation.estimate import DEFAULT_METHOD as DEFAULT_ESTIMATOR
from optrr_engine.io.readers import ReaderOptions, iter_chunks
from optrr_engine.tasks import TaskControl

#: The four figures: (mode of ratio_curves, column plotted, x column, label).
FIGURES = {
    "fig1": ("fixed_sizes", "ratio_to_sum", "sum_eps", "Fig. 1 — a_i = 5: whole-record ε / Σε_i against Σε_i"),
    "fig2": ("fixed_sizes", "ratio_to_optimal", "sum_eps", "Fig. 2 — a_i = 5: heuristic / optimal whole-record ε"),
    "fig3": ("fixed_epsilons", "ratio_to_sum", "sum_a", "Fig. 3 — ε_i = 3: whole-record ε / Σε_i against Σa_i"),
    "fig4": ("fixed_epsilons", "ratio_to_optimal", "sum_a", "Fig. 4 — ε_i = 3: heuristic / optimal whole-record ε"),
}


def ratio_figure(figure: str, ks, sets: int, seed=None, progress=None, cancel=None):
    """DataFrame of ``optrr_engine.compare.ratio_curves`` for one of the paper's figures."""
    mode = FIGURES[figure][0]
    return harness.ratio_curves(ks=tuple(ks), sets=int(sets), mode=mode, seed=seed, progress=progress, cancel=cancel)


def load_data(path: str, options: dict, columns: list[str] | None, progress=None, cancel=None):
    """The loaded file as the harness's categorical data (its stated preparation rules), restricted to the
    columns the session perturbs when there are at least two of them."""
    ctl = TaskControl(progress, cancel)
    reader = ReaderOptions.from_dict(options)
    frames = []
    for frame in iter_chunks(path, reader, columns=columns or None):  # None: every column that can be read
        ctl.check()
        frames.append(frame)
        ctl.report(0.0, f"{sum(len(f) for f in frames):,} rows read")
    frame = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    frame = frame.fillna("")
    name = path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    return harness.prepare_frame(frame, name)


#: The AVD page's designs (the harness's default) and the Bloom-filter schemes it can add.
AVD_METHODS = (*METHODS, "rr_clusters")
BLOOM_METHODS = ("lopub", "locop", "brr")


def avd(
    data,
    target: float,
    ways,
    subsets: int,
    estimator: str,
    seed=None,
    methods=None,
    axis: str = "whole_record",
    progress=None,
    cancel=None,
):
    """(rows, design summaries) of ``optrr_engine.compare.avd_table`` (``target`` on ``axis``)."""
    return harness.avd_table(
        data,
        target,
        methods=methods,
        axis=axis,
        ways=tuple(ways),
        subsets=int(subsets),
        estimator=estimator,
        seed=seed,
        progress=progress,
        cancel=cancel,
    )


def avd_on_file(
    path,
    options,
    columns,
    target,
    ways,
    subsets,
    estimator,
    seed=None,
    methods=None,
    axis: str = "whole_record",
    progress=None,
    cancel=None,
):
    """Read and prepare the file, then :func:`avd` (one job, so that it can run in a worker process)."""
    ctl = TaskControl(progress, cancel)
    data = load_data(path, options, columns, ctl.sub(0.0, 0.2).progress, cancel)
    rows, designs = avd(data, target, ways, subsets, estimator, seed, methods, axis, ctl.sub(0.2, 1.0).progress, cancel)
    return {"rows": rows, "designs": designs, "name": data.name, "columns": list(data.columns)}


#: The simulated perturbation of the preview uses this seed, so that the picture changes only when the design,
#: the categories or the data change (it is a preview: the release itself draws fresh randomness or the key's).
PREVIEW_SEED = 20240601


def release_preview(
    path,
    options: dict,
    config: dict,
    mechanism,
    columns: list[str],
    estimator: str = DEFAULT_ESTIMATOR,
    confidence: float = 0.95,
    seed=PREVIEW_SEED,
    progress=None,
    cancel=None,
):
    """The release, previewed for the perturbed ``columns``: the file is encoded by the engine's release codec
    from ``config`` (a ReleaseConfig dict: recoding, bins, missing values, rows left out), then per column

    - ``original``: the shares pi of the encoded categories;
    - ``perturbed``: the expected shares after randomization, lambda = M_j pi, with M_j the channel that
      ``mechanism`` (the release's Mechanism object itself, pickled in the worker thread, never on the UI
      thread) induces on column j;
    - ``estimated``: the ``estimator``'s estimate from one perturbation of the column drawn from M_j (seeded);
      ``ci_low`` / ``ci_high``: the ``confidence`` interval of the unbiased estimate, from its covariance.

    Returns {"frames": one DataFrame per column, "rows", "overall_epsilon", "attributes"}."""
    from optrr_engine.errors import InputError
    from optrr_engine.estimation import estimate_from_counts
    from optrr_engine.estimation.operator import StructuredOperator
    from optrr_engine.estimation.pooled_prior import one_way_prior_bound
    from optrr_engine.io.readers import open_source
    from optrr_engine.release.codec import Codec
    from optrr_engine.release.config import ReleaseConfig
    from optrr_engine.release.schema import resolve_bins

    ctl = TaskControl(progress, cancel)
    cfg = ReleaseConfig.from_dict(config)
    cfg.validate()
    source = open_source(path, ReaderOptions.from_dict(options))
    if resolve_bins(source, cfg, ctl.sub(0.0, 0.1)):
        source = open_source(path, source.options)
    codec = Codec(cfg, decimal=source.options.decimal or ".")
    mech = mechanism
    if [int(a) for a in mech.sizes] != [int(a) for a in codec.sizes]:
        raise InputError("the design was computed for other categories; it is being updated")
    unknown = [c for c in columns if c not in codec.attributes]
    if unknown:
        raise InputError(f"column {unknown[0]!r} is not perturbed in this design")
    positions = [codec.attributes.index(c) for c in columns]
    # the default estimate's 1-way prior is bounded by all of the release's columns (estimation.pooled_prior), so
    # with it every column is perturbed; each column draws from its own stream of the seed, so that its picture does
    # not depend on which columns are shown
    k = len(codec.attributes)
    drawn = list(range(k)) if estimator == "map" else sorted(set(positions))
    streams = np.random.SeedSequence(seed).spawn(k)
    rngs = {j: np.random.default_rng(streams[j]) for j in drawn}
    channels = {j: mech.marginal([j]) for j in drawn}
    original = {j: np.zeros(int(codec.sizes[j]), dtype=np.int64) for j in set(positions)}  # the shown columns
    observed = {j: np.zeros(int(codec.sizes[j]), dtype=np.int64) for j in drawn}
    rows = 0
    reading = ctl.sub(0.1, 0.9)
    for table in source.tables(codec.attributes):
        reading.check()
        codes = codec.encode_table(table, rows)[0]
        for j in drawn:
            a = observed[j].size
            if j in original:
                original[j] += np.bincount(codes[:, j], minlength=a)
            observed[j] += np.bincount(channels[j].sample(codes[:, [j]], rngs[j])[:, 0], minlength=a)
        rows += codes.shape[0]
        reading.report(source.fraction_done(), f"{rows:,} rows encoded")
    if rows == 0:
        raise InputError("no rows to preview: the file is empty or every row is left out")
    bound = one_way_prior_bound((channels[j], observed[j]) for j in drawn) if estimator == "map" else None
    frames = []
    epsilons = mech.attribute_epsilons()
    for m, j in enumerate(positions):
        ctl.check()
        shares = original[j] / rows
        expected = StructuredOperator.from_mechanism(channels[j]).apply(shares)
        est = estimate_from_counts(channels[j], observed[j], method=estimator, confidence=confidence, prior_bound=bound)
        frames.append(
            pd.DataFrame(
                {
                    "attribute": columns[m],
                    "category": [str(c) for c in codec.specs[j].labels],
                    "rows": original[j],
                    "original": shares,
                    "perturbed": expected,
                    "estimated": est.estimate,
                    "unbiased": est.unbiased,
                    "ci_low": est.ci_low,
                    "ci_high": est.ci_high,
                    "simulated_perturbed": observed[j] / rows,
                    "estimator": estimator,
                    "attribute_epsilon": float(epsilons[j]),
                    "overall_epsilon": float(mech.overall_epsilon()),
                    # the default estimate's prior (pseudo-records) and whether the release's spread lowered it
                    "prior_records": float(est.info.get("prior_records", np.nan)),
                    "prior_lowered": "prior_lowered" in est.info,
                }
            )
        )
        ctl.report(0.9 + 0.1 * (m + 1) / len(positions), f"estimated {columns[m]}")
    return {"frames": frames, "rows": rows, "overall_epsilon": float(mech.overall_epsilon()),
            "attributes": list(codec.attributes)}


def designs_on_file(
    path,
    config: dict,
    target: float,
    weights,
    marginals,
    sets: int = 20,
    repetitions: int = 3,
    progress=None,
    cancel=None,
):
    """The "Designs at your ε" page: the file encoded as the release would encode it (``config``: a
    ReleaseConfig dict; bins computed from the data when the configuration asks for it; the encoded codes are
    kept per data in this process, :func:`jobs.clusters.encoded_codes`), then every design the recommender
    ranks at whole-record ``target``, released ``repetitions`` times in memory and estimated with the default
    estimator. Returns {"rows": DataFrame, "ranking": the recommender's JSON, "rows_in_file": n}."""
    from optrr_engine.compare.designs_on_data import compare_designs
    from optrr_engine.io.readers import open_source
    from optrr_engine.release.codec import Codec
    from optrr_engine.release.config import ReleaseConfig
    from optrr_engine.release.schema import resolve_bins

    from .clusters import encoded_codes

    ctl = TaskControl(progress, cancel)
    cfg = ReleaseConfig.from_dict(config)
    cfg.validate()
    resolve_bins(open_source(path, ReaderOptions.from_dict(cfg.input)), cfg, ctl.sub(0.0, 0.05))
    reading = ctl.sub(0.05, 0.3)
    codes = encoded_codes(path, cfg, reading.progress, reading.cancel)
    sizes = [len(spec.labels) for spec in Codec(cfg).specs]
    work = ctl.sub(0.3, 1.0)
    rows, ranking = compare_designs(
        codes, sizes, target, weights, marginals, sets=sets, repetitions=repetitions, progress=work.progress,
        cancel=work.cancel,
    )
    return {"rows": rows, "ranking": ranking, "rows_in_file": int(len(codes))}
