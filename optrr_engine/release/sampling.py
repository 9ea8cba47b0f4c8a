"""Releases by a sampling design (smp, sample-m, rsfd; optrr_engine.sampling, docs/sampling.md).

The design object stands where a Mechanism stands in :mod:`.perturb` and :mod:`.manifest` (``sample``,
``attribute_epsilons``, ``overall_epsilon``, ``to_dict``, ``self_check``, ``sizes``); a not-reported cell is
code NOT_REPORTED, written as NOT_REPORTED_LABEL by the codec.
"""

from __future__ import annotations

import time

import numpy as np

from ..errors import InputError
from ..sampling.design import make_sampling_design
from ..tolerance import eps_above
from .design_step import ReleaseDesign


class SamplingReleaseDesign:
    """The parts of designs.Design that a release reads, for a sampling design (no per-attribute request:
    the requested epsilons are the achieved ones, so nothing is reported as changed)."""

    def __init__(self, sampling, seconds: float):
        self.method = sampling.method
        self.mechanism = sampling
        self.requested_epsilons = sampling.attribute_epsilons()
        self.design_seconds = float(seconds)
        self.info = {
            "whole_record_epsilon": sampling.whole_record_epsilon(),
            "target_total": sampling.target,
            "m": sampling.m,
            "suppression": sampling.suppression_text(),
            **sampling.info,
        }

    def attribute_epsilons(self) -> np.ndarray:
        return self.mechanism.attribute_epsilons()

    @property
    def overall_epsilon(self) -> float:
        return self.mechanism.overall_epsilon()

    def epsilon_changes(self) -> list:
        return []


def make_sampling_release_design(config, sizes) -> ReleaseDesign:
    cols = config.perturbed()
    weights = None
    if config.method in ("smp", "rsfd") and any(c.weight is not None for c in cols):
        weights = [float(c.weight if c.weight is not None else 1.0) for c in cols]
    t0 = time.perf_counter()
    sampling = make_sampling_design(config.method, sizes, config.target_total, m=config.sample_m, weights=weights)
    seconds = time.perf_counter() - t0
    if not sampling.self_check().ok:
        raise InputError(f"the {config.method} design failed its self-check")
    if eps_above(sampling.whole_record_epsilon(), config.target_total):
        raise InputError(f"the {config.method} design exceeds the whole-record epsilon {config.target_total:g}")
    notes = [
        f"sampling design {sampling.method}: {sampling.suppression_text()}",
        f"whole-record epsilon target {config.target_total:g}, achieved {sampling.whole_record_epsilon():.6g}",
    ]
    return ReleaseDesign(design=SamplingReleaseDesign(sampling, seconds), method_requested=config.method, notes=notes)
