"""Privacy risk in plain words and numbers, recomputed from the mechanism.

Per column i: the probability that a released value is the true one, P(y_i = x_i), read off the
mechanism induced on that attribute alone (``Mechanism.marginal([i])``: X_0 of its two patterns). For a
pattern mechanism this equals e^eps_i / (e^eps_i + a_i - 1) with the attribute's achieved eps_i; a random
guess is right with probability 1 / a_i.

For the whole record (eps = whole-record epsilon): an attacker who knows everything else about a patient
and holds a prior belief p in any statement about that patient's true record can, after seeing the
released record, believe it with probability at most p e^eps / (1 - p + p e^eps) (Bayes' rule with the
likelihood ratio bounded by e^eps; computed as a logistic function in log space).

The words strong / moderate / weak / very weak are OptRR's reading of the literature (docs/gui.md,
"How strong is this epsilon?"), not a legal standard: no regulator sets an epsilon threshold.
"""

from __future__ import annotations

import math

import numpy as np

from ..tolerance import eps_within

#: (upper bound of epsilon, word): eps <= 1 strong, <= 3 moderate, <= 8 weak, above that very weak.
STRENGTH_BANDS = ((1.0, "strong"), (3.0, "moderate"), (8.0, "weak"), (math.inf, "very weak"))
#: The whole-record epsilon a new configuration starts with, shared by its perturbed columns (the safe start: the
#: window's for a newly opened file, ``optrr schema``'s for a new configuration; the top of "moderate").
SAFE_START_TARGET = 3.0
#: Prior beliefs used in the whole-record sentence.
EXAMPLE_PRIORS = (0.01, 0.1, 0.5)


def keep_probabilities(mechanism) -> np.ndarray:
    """P(released value = true value) of every attribute, from its induced single-attribute mechanism."""
    out = np.empty(mechanism.k)
    for i in range(mechanism.k):
        out[i] = math.exp(float(mechanism.marginal([i]).log_pattern_probs()[0]))
    return out


def posterior_bound(prior, epsilon):
    """Largest posterior of an epsilon-LDP observation for a prior ``prior``: p e^eps / (1 - p + p e^eps)."""
    p = np.asarray(prior, dtype=float)
    with np.errstate(divide="ignore"):
        logit = np.log(p) - np.log1p(-p) + np.asarray(epsilon, dtype=float)
    out = np.exp(-np.logaddexp(0.0, -logit))
    return float(out) if out.ndim == 0 else out


def strength(epsilon: float) -> str:
    """strong / moderate / weak / very weak (STRENGTH_BANDS); a band's bound is compared with the engine's
    relative epsilon tolerance (an achieved 3 x (1 + 1e-10) still reads "moderate")."""
    for bound, word in STRENGTH_BANDS:
        if eps_within(epsilon, bound):
            return word
    return STRENGTH_BANDS[-1][1]


def _percent(x: float) -> str:
    """'5.2%', '58%', '99.4%' (one decimal from 99%, so a bound below 100% never reads '100%'), 'over 99.9%'."""
    if x >= 0.9995:
        return "over 99.9%"
    if x >= 0.99:
        return f"{100 * x:.1f}%"
    return f"{100 * x:.2g}%" if x < 0.1 else f"{100 * x:.0f}%"


def column_sentence(keep_probability: float, categories: int) -> str:
    """'A released value is the true one 58% of the time (a random guess: 33%).'"""
    return (
        f"A released value is the true one {_percent(keep_probability)} of the time "
        f"(a random guess among its {categories} categories: {_percent(1.0 / categories)})."
    )


def record_sentence(epsilon: float, priors=EXAMPLE_PRIORS) -> str:
    """What the whole-record epsilon allows an attacker who knows everything else."""
    def bound(p: float) -> str:
        b = posterior_bound(p, epsilon)
        return f"to {_percent(b)}" if b >= 0.9995 else f"to at most {_percent(b)}"

    pairs = ", ".join(f"from {_percent(p)} {bound(p)}" for p in priors)
    return (
        f"Whole-record epsilon {epsilon:.3g} ({strength(epsilon)}): an attacker who knows everything else about a "
        f"patient can raise their confidence in any guess about that patient's record {pairs}."
    )


def weak_protection_warnings(manifest: dict) -> list[str]:
    """Warnings for a release whose whole-record epsilon is in the "weak" or "very weak" band (above 3): what the
    whole-record epsilon allows, and in the "very weak" band (above 8) the columns above it by name (from the
    manifest's recomputed epsilons)."""
    overall = float(manifest["overall_epsilon"])
    word = strength(overall)
    if word not in (STRENGTH_BANDS[-2][1], STRENGTH_BANDS[-1][1]):
        return []
    lines = [f"{word} protection: {record_sentence(overall)}"]
    if word != STRENGTH_BANDS[-1][1]:
        return lines
    bound = STRENGTH_BANDS[-2][0]
    weak = [a for a in manifest["attributes"] if not eps_within(float(a["achieved_epsilon"]), bound)]
    if weak:
        shown = ", ".join(f"{a['name']} (epsilon {float(a['achieved_epsilon']):.3g})" for a in weak)
        lines.append(f"columns above epsilon {bound:g}, released almost as they are: {shown}")
    return lines

