"""Estimate a marginal straight from a release: stream the perturbed file, count, invert (docs/math.md §6)."""

from __future__ import annotations

import os

import numpy as np

from ..errors import InputError
from ..mechanism import Mechanism
from ..tasks import TaskControl
from .counts import StreamingCounter
from .estimate import DEFAULT_METHOD, estimate_from_counts
from .pooled_prior import one_way_prior_bound
from .release_source import (
    attribute_index,
    check_rows,
    encode_arrow,
    iter_code_chunks,
    load_manifest,
    mechanism_from_manifest,
    not_private_warning,
    reader_options,
)
from .result import MarginalEstimate


def default_manifest_path(release_path: str) -> str:
    """The release writer's OUTPUT.csv.manifest.json next to the data file (or OUTPUT.manifest.json if only
    that exists)."""
    stem, _ = os.path.splitext(release_path)
    first = release_path + ".manifest.json"
    second = stem + ".manifest.json"
    if not os.path.exists(first) and os.path.exists(second):
        return second
    return first


def count_release(release_path: str, manifest: dict, names: list[str], progress=None, cancel=None) -> np.ndarray:
    """Counts of the perturbed marginal over ``names``, read chunk by chunk."""
    ctl = TaskControl(progress, cancel)
    idx = attribute_index(manifest, names)
    names = [str(manifest["attributes"][i]["name"]) for i in idx]
    cats = [[str(c) for c in manifest["attributes"][i]["categories"]] for i in idx]
    counter = StreamingCounter([len(c) for c in cats])
    total = manifest.get("rows")
    for codes in iter_code_chunks(release_path, list(names), cats):
        ctl.check()
        counter.add(codes)
        if total:
            ctl.report(counter.rows / float(total), f"counted {counter.rows:,} rows")
    check_rows(manifest, counter.rows)
    return counter.table


def count_one_way_release(
    release_path: str, manifest: dict, required: int, progress=None, cancel=None
) -> list[np.ndarray | None]:
    """The perturbed 1-way counts of every attribute of a release, in one pass, each column encoded on its own (no
    rows x columns array). A column other than ``required`` that the file lacks or that holds a label outside its
    categories is None: it is left out of the 1-way prior's bound (``pooled_prior``), never a reason to refuse the
    column asked for."""
    from ..io.readers import column_names, iter_tables

    ctl = TaskControl(progress, cancel)
    names = [str(a["name"]) for a in manifest["attributes"]]
    cats = [[str(c) for c in a["categories"]] for a in manifest["attributes"]]
    present = set(column_names(release_path, reader_options()))
    tables: list[np.ndarray | None] = [
        np.zeros(len(c), dtype=np.int64) if n in present or j == required else None
        for j, (n, c) in enumerate(zip(names, cats, strict=True))
    ]
    read = [n for j, n in enumerate(names) if tables[j] is not None]
    rows = 0
    total = manifest.get("rows")
    for chunk in iter_tables(release_path, reader_options(), columns=read):
        ctl.check()
        for j, name in enumerate(names):
            table = tables[j]
            if table is None:
                continue
            try:  # (a column the file lacks is None already; the one asked for is refused by the reader)
                codes = encode_arrow(chunk.column(name), cats[j], name)
            except InputError:
                if j == required:
                    raise
                tables[j] = None
                continue
            table += np.bincount(codes, minlength=table.size)
        rows += chunk.num_rows
        if total:
            ctl.report(rows / float(total), f"counted {rows:,} rows")
    check_rows(manifest, rows)
    return tables


def open_release(release_path: str, manifest_path: str | None = None, check_hash: bool = True):
    """(manifest, mechanism) of a release; the manifest defaults to the one next to the data file."""
    if not os.path.exists(release_path):
        raise InputError(f"release file {release_path} does not exist")
    manifest_path = manifest_path or default_manifest_path(release_path)
    manifest = load_manifest(manifest_path, data_path=release_path, check_hash=check_hash)
    return manifest, mechanism_from_manifest(manifest)


def estimate_release(
    release_path: str,
    names: list[str],
    manifest_path: str | None = None,
    method: str = DEFAULT_METHOD,
    confidence: float = 0.95,
    check_hash: bool = True,
    progress=None,
    cancel=None,
    opened=None,
) -> MarginalEstimate:
    """Estimate the joint distribution of the attributes ``names`` from a release.

    ``opened``: an already loaded (manifest, mechanism) pair from :func:`open_release`.
    """
    ctl = TaskControl(progress, cancel)
    if not names:
        raise InputError("name at least one attribute for the marginal")
    manifest, mechanism = opened or open_release(release_path, manifest_path, check_hash)
    warning = not_private_warning(release_path, manifest)
    if not isinstance(mechanism, Mechanism):
        from .sampled import estimate_sampling_release

        est = estimate_sampling_release(
            release_path, manifest, mechanism, names, method, confidence, ctl.progress, cancel
        )
        if warning:
            est.info["not_private"] = warning
        return est
    idx = attribute_index(manifest, names)
    names = [str(manifest["attributes"][i]["name"]) for i in idx]
    bound = None
    if method == DEFAULT_METHOD and len(idx) == 1:  # the 1-way prior's bound needs every column (pooled_prior)
        tables = count_one_way_release(release_path, manifest, idx[0], ctl.sub(0.0, 0.8).progress, cancel)
        counts = tables[idx[0]]
        assert counts is not None  # the column asked for is read or refused
        bound = one_way_prior_bound((mechanism.marginal([j]), t) for j, t in enumerate(tables) if t is not None)
    else:
        counts = count_release(release_path, manifest, names, ctl.sub(0.0, 0.8).progress, cancel)
    cats = [[str(c) for c in manifest["attributes"][i]["categories"]] for i in idx]
    est = estimate_from_counts(
        mechanism.marginal(idx),
        counts,
        method=method,
        confidence=confidence,
        attributes=list(names),
        categories=cats,
        progress=ctl.sub(0.8, 1.0).progress,
        cancel=cancel,
        prior_bound=bound,
    )
    est.info["release"] = os.path.basename(release_path)
    est.info["whole_record_epsilon"] = mechanism.overall_epsilon()
    est.info["attribute_epsilons"] = [float(e) for e in mechanism.attribute_epsilons()[idx]]
    if warning:
        est.info["not_private"] = warning
    return est
