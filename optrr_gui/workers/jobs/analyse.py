"""Jobs of the Analyse tab: open a release (manifest + mechanism) and estimate from it."""

from __future__ import annotations

from optrr_engine.analysis.release_chi2 import chi2_release
from optrr_engine.estimation import estimate_release
from optrr_engine.estimation.release_estimate import default_manifest_path, open_release
from optrr_engine.estimation.release_source import not_private_warning
from optrr_engine.utility.release_check import effect_of, estimate_information


def open_release_task(path: str, manifest_path: str | None, progress=None, cancel=None) -> dict:
    """Worker: load the manifest (checks the data file's hash) and rebuild the mechanism; ``not_private`` is the
    warning for a test-seed release (from the data file's marker column or the manifest), else None."""
    manifest_path = manifest_path or default_manifest_path(path)
    manifest, mechanism = open_release(path, manifest_path, check_hash=True)
    return {
        "manifest": manifest,
        "mechanism": mechanism,
        "manifest_path": manifest_path,
        "not_private": not_private_warning(path, manifest),
    }


def estimate_task(path, names, manifest_path, method, confidence, opened, progress=None, cancel=None) -> dict:
    """Worker: the estimated marginal (with how much information the release carries on it and whether its unbiased
    estimate is too noisy, as ``optrr estimate`` says) and, for two attributes, the chi-square tests."""
    opened = opened or open_release(path, manifest_path)  # once, for the estimate and its information
    est = estimate_release(
        path,
        list(names),
        manifest_path=manifest_path,
        method=method,
        confidence=confidence,
        progress=progress,
        cancel=cancel,
        opened=opened,
    )
    manifest, mechanism = opened
    est.info.update(estimate_information(manifest, mechanism, list(names), effect_of(est)))  # as optrr estimate
    out = {"estimate": est, "chi2": None}
    if len(names) == 2:
        out["chi2"] = chi2_release(path, list(names), manifest_path=manifest_path, cancel=cancel)
    return out
