"""The release configuration of a design shown in the window: one function for the release dialog and the recipe,
so that ``optrr perturb --config`` on an exported recipe releases the very design the window releases. Qt-free."""

from __future__ import annotations

from ..state.design_summary import BUDGET_ONLY_METHODS


def release_configuration(state, method: str, summary, accept_changed: bool, allow_unidentifiable: bool = False):
    """The session's ReleaseConfig for ``method`` whose current summary is ``summary``: the method itself, the
    mechanism shown (released exactly, never recomputed; sampling designs are defined by their method and target),
    and the user's acceptance of raised epsilons and of erased needed tables."""
    config = state.to_release_config(method=method)
    config.accept_changed_epsilons = bool(accept_changed)
    config.allow_unidentifiable = bool(allow_unidentifiable)
    if method not in BUDGET_ONLY_METHODS or method == "utility":
        config.set_mechanism(summary.design.mechanism, summary.design.method)
    return config
