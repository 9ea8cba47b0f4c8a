"""The mechanism of a release: run the configured design on the codec's category counts.

Honesty rule: a design never silently returns an attribute epsilon above what was asked. If the chosen
method raises any eps_i (the paper's heuristic can), the release stops with a one-line error naming the
column, unless the configuration sets ``accept_changed_epsilons``; the manifest then lists every change.
A configuration that carries a ``mechanism`` (the one the GUI showed) is released exactly as it is: it is
checked against the columns' category counts and requested epsilons (or the whole-record target), never
recomputed, and a given mechanism above the request or the target is refused with its own way out (the
configuration's method did not design it: the notes say so, and name the method it records if any); its budget
entry states the target and that the mechanism was given, and a scale of the weights only when its column epsilons
are one (``given_budget``). With target_total, per-column epsilons in the configuration are ignored, and a
warning for the data manager says so (``config_warnings``: stderr, the audit record and the internal report; never
the manifest or the recipient's report: it is about the configuration, not the release). Method "utility" is
released only so (without one, the error names the ``optrr design`` command that writes it for these columns). If
"auto" is configured but this build of the engine has no "auto" method, an exact design is used instead (optimal
LP for k <= AUTO_FALLBACK_OPTIMAL_K, else the family optimum, else Kronecker), and the manifest says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ..designs import Design
from ..errors import InfeasibleError, InputError
from ..tasks import TaskControl

if TYPE_CHECKING:
    from .sampling import SamplingReleaseDesign

AUTO_FALLBACK_OPTIMAL_K = 10


@dataclass
class ReleaseDesign:
    design: Design | SamplingReleaseDesign
    method_requested: str
    budget: dict | None = None
    notes: list = field(default_factory=list)
    #: For the data manager, never the recipient (not in the manifest): what in the configuration played no part,
    #: e.g. "epsilon" values of perturbed columns that target_total overrode (:func:`ignored_epsilons_note`).
    config_warnings: list = field(default_factory=list)

    @property
    def mechanism(self):
        return self.design.mechanism

    @property
    def requested(self) -> np.ndarray:
        return np.asarray(self.design.requested_epsilons, dtype=float)


def _fallback_methods(k: int) -> list[str]:
    return (["optimal"] if k <= AUTO_FALLBACK_OPTIMAL_K else []) + ["family", "kronecker"]


def _run(method: str, sizes, eps, weights, target, ctl: TaskControl):
    from ..budget import distribute_budget
    from ..designs import run_design

    if target is not None:
        result = distribute_budget(method, sizes, weights, target, progress=ctl.progress, cancel=ctl.cancel)
        budget = {"target_total": float(target), "weights": [float(w) for w in weights], "scale": float(result.scale)}
        return result.design, budget
    return run_design(method, sizes, eps, progress=ctl.progress, cancel=ctl.cancel), None


def _given(config, mech, sizes, eps, target):
    """A Design around the configuration's mechanism, after checking it fits the columns and the request."""
    from ..designs import Design
    from ..tolerance import eps_within

    if not np.array_equal(mech.sizes, sizes):
        raise InputError(
            f"the configuration's mechanism is for category counts {mech.sizes.tolist()} but the perturbed columns "
            f"have {sizes.tolist()}; remove 'mechanism' to design anew, or run `{DESIGN_COMMAND}` for these columns"
        )
    if target is not None:
        if not eps_within(mech.overall_epsilon(), target):
            raise InputError(
                f"the configuration's mechanism has whole-record epsilon {mech.overall_epsilon():.6g}, above "
                f"target_total {target:g}: remove 'mechanism' to let method {config.method!r} design anew for this "
                f"target, re-run the design at this target (`{DESIGN_COMMAND}`), or raise target_total"
            )
        eps = mech.attribute_epsilons()
    return Design(config.method, mech, np.asarray(eps, dtype=float), 0.0, {"mechanism_source": "configuration"})


def common_scale(epsilons, weights) -> float | None:
    """The c with eps_i = c w_i / max(w) for every column (relative tolerance REL_TOL), or None when no single c
    gives these epsilons."""
    from ..tolerance import eps_equal

    eps, w = np.asarray(epsilons, dtype=float), np.asarray(weights, dtype=float)
    c = float(eps[int(np.argmax(w))])
    return c if bool(np.all(eps_equal(eps, c * w / w.max()))) else None


def given_budget(mech, target: float, weights) -> dict:
    """The budget entry of a mechanism given with target_total: the target, the weights, that the mechanism was given
    (its whole-record epsilon is the manifest's overall_epsilon), and the scale c of the weights only when its column
    epsilons are c w_i / max(w)."""
    budget = {
        "target_total": float(target),
        "weights": [float(w) for w in weights],
        "mechanism": "given in the configuration",
    }
    scale = common_scale(mech.attribute_epsilons(), weights)
    if scale is not None:
        budget["scale"] = scale
    return budget


def given_note(config) -> str:
    """The note of a released given mechanism: the configuration's method did not design it (and which did, when
    the mechanism records it, as a manifest's mechanism does)."""
    recorded = config.mechanism.get("method") if isinstance(config.mechanism, dict) else None
    if isinstance(recorded, str) and recorded:
        origin = f"it was designed by method {recorded!r}, as recorded in it"
        if recorded != config.method:
            origin += f"; the configuration's method {config.method!r} was not run"
    else:
        origin = (
            f"the configuration's method {config.method!r} was not run, and the mechanism does not record which "
            "method designed it"
        )
    return f"the mechanism given in the configuration, used unchanged (every epsilon is recomputed from it): {origin}"


#: Why a configuration's per-column epsilons play no part, by where the columns' epsilons come from instead.
IGNORED_EPSILONS = {
    "weights": "per-column epsilons in the configuration are ignored: target_total sets them from the weights",
    "mechanism": (
        "per-column epsilons in the configuration are ignored: the given mechanism sets them (its whole-record "
        "epsilon is checked against target_total)"
    ),
    "sampling": (
        "per-column epsilons in the configuration are ignored: the sampling design sets them from target_total"
    ),
}


def ignored_epsilons_note(config, source: str) -> str | None:
    """The warning when target_total overrides "epsilon" values the configuration's perturbed columns carry (as
    ``optrr schema`` writes them), else None."""
    if config.target_total is None or all(c.epsilon is None for c in config.perturbed()):
        return None
    return IGNORED_EPSILONS[source]


def _raised_error(design, raised: list, names: list[str], given: bool, method: str) -> InputError:
    """The refusal of attribute epsilons above the request: a design's own, or a given mechanism's."""
    c = raised[0]
    more = f" (and {len(raised) - 1} more columns)" if len(raised) > 1 else ""
    column, asked, got = names[c["attribute"]], c["requested"], c["achieved"]
    if given:
        return InputError(
            f"the mechanism in the configuration gives column {column!r} epsilon {got:.6g}, above the requested "
            f"{asked:.6g}{more}, i.e. weaker privacy than asked; remove 'mechanism' to let method {method!r} design "
            f"anew for these epsilons, or re-run the design for them (`{DESIGN_COMMAND}`), or set "
            "accept_changed_epsilons to true to accept it"
        )
    return InputError(
        f"method {design.method!r} would raise the epsilon of column {column!r} from {asked:.6g} to "
        f"{got:.6g}{more}, i.e. weaker privacy than asked; choose method auto, optimal or family, or set "
        "accept_changed_epsilons to true to accept it"
    )


#: The command that writes a configuration with a design's mechanism put in (``optrr design --config``, docs).
DESIGN_COMMAND = "optrr design --config CONFIG -o NEW.json"


def _utility_without_mechanism(config) -> InputError:
    need = "" if config.target_total is not None else "set target_total (the whole-record epsilon), then "
    return InputError(
        "method utility is released with the mechanism of its design, and the configuration has no 'mechanism': "
        f"{need}run `{DESIGN_COMMAND} --method utility` (CONFIG: this configuration; it writes NEW.json with the "
        "mechanism put in; the GUI does this itself) and release NEW.json, or choose another method"
    )


def make_design(config, sizes, names: list[str], progress=None, cancel=None) -> ReleaseDesign:
    from ..designs import METHODS
    from ..sampling.design import SAMPLING_METHODS

    if config.method in SAMPLING_METHODS:
        from .sampling import make_sampling_release_design

        made = make_sampling_release_design(config, sizes)
        return _with_ignored_epsilons(made, config, "sampling")
    ctl = TaskControl(progress, cancel)
    sizes = np.asarray(sizes, dtype=np.int64)
    cols = config.perturbed()
    target = config.target_total
    eps = None if target is not None else [float(c.epsilon) for c in cols]
    weights = [float(c.weight if c.weight is not None else 1.0) for c in cols] if target is not None else None
    method = config.method
    notes: list[str] = []
    given = config.given_mechanism()
    if given is not None:
        design = _given(config, given, sizes, eps, target)
        budget = given_budget(given, target, weights) if target is not None and weights is not None else None
        notes.append(given_note(config))
    elif method == "utility":
        raise _utility_without_mechanism(config)
    elif method in METHODS:
        design, budget = _run(method, sizes, eps, weights, target, ctl)
    elif method == "auto":
        design = budget = None
        for m in _fallback_methods(len(sizes)):
            try:
                design, budget = _run(m, sizes, eps, weights, target, ctl)
            except InfeasibleError:
                continue
            notes.append(f"method 'auto' is not available in this build; used the exact method {m!r} instead")
            break
        if design is None:
            raise InputError("no exact design reaches these epsilons; choose another method")
    else:
        raise InputError(f"method {method!r} is unknown; choose one of {', '.join(METHODS)}")
    raised = [c for c in design.epsilon_changes() if c["achieved"] > c["requested"]]
    if raised and not config.accept_changed_epsilons:
        raise _raised_error(design, raised, names, given is not None, method)
    if raised:
        notes.append(f"accepted: {len(raised)} attribute epsilon(s) above the request (accept_changed_epsilons)")
    check = design.mechanism.self_check()
    if not check.ok:
        raise InputError(f"the {design.method} design failed its self-check (mass error {check.mass_error:.3g})")
    made = ReleaseDesign(design=design, method_requested=config.method, budget=budget, notes=notes)
    return _with_ignored_epsilons(made, config, "weights" if given is None else "mechanism")


def _with_ignored_epsilons(made: ReleaseDesign, config, source: str) -> ReleaseDesign:
    """``made`` with the data manager's warning of per-column epsilons that target_total overrides."""
    note = ignored_epsilons_note(config, source)
    if note is not None:
        made.config_warnings.append(note)
    return made
