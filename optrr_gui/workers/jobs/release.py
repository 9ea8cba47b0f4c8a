"""Job of the release dialog: perturb a file and write the release."""

from __future__ import annotations

from optrr_engine.release.perturb import perturb_file


def run_release(input_path, config, output_path, options: dict, progress=None, cancel=None) -> dict:
    """Worker: the engine's perturb_file; returns its manifest."""
    return perturb_file(
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
