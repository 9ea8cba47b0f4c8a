"""Sampling designs: each record reports a random subset of its attributes (estimators: estimation.sampled)."""

from .design import (
    NOT_REPORTED,
    NOT_REPORTED_LABEL,
    SAMPLING_METHODS,
    SamplingDesign,
    make_sampling_design,
    rsfd_design,
    sample_m_design,
    smp_design,
)

__all__ = [
    "NOT_REPORTED",
    "NOT_REPORTED_LABEL",
    "SAMPLING_METHODS",
    "SamplingDesign",
    "make_sampling_design",
    "rsfd_design",
    "sample_m_design",
    "smp_design",
]
