"""Job of the release dialog: perturb a file and write the release."""

from __future__ import annotations

from optrr_engine.release.perturb import perturb_file


def run_release(input_path, config, output_path, options: dict, progress=None, cancel=None) -> dict:
    """Worker: the engine's perturb_file; returns its manifest."""
    return perturb_file(
        input_path,
        config,
        output_path,
        insecure_test_seed=options.get("seed"),
        shuffle=options.get("shuffle", True),
        output_format=options.get("output_format"),
        force=options.get("force", False),
        allow_repeat=options.get("allow_repeat", False),
        audit_dir=options.get("audit_dir"),
        progress=progress,
        cancel=cancel,
    )
