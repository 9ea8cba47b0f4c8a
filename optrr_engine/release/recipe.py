"""A reproducible recipe: the release configuration plus the exact ``optrr perturb`` command that applies
it, so the same release can be made again (or audited) without the application.

``write_recipe`` writes CONFIG (the configuration JSON) and CONFIG's stem + ``.perturb.sh`` (a POSIX shell
script holding the command, paths absolute and quoted with :func:`shlex.join`), each atomically; neither
is replaced unless ``force``. The command reproduces the configuration (columns, recoding, design and
epsilons); each run draws fresh randomness, as every release must (docs/security.md).
"""

from __future__ import annotations

import os
import shlex


def perturb_command(data_path, config_path, output_path, shuffle: bool = True, output_format=None,
                    program: str = "optrr") -> str:
    """The command line: ``optrr perturb DATA --config CONFIG -o OUTPUT [--no-shuffle] [--format F]``."""
    args = [program, "perturb", os.path.abspath(os.fspath(data_path)), "--config",
            os.path.abspath(os.fspath(config_path)), "-o", os.path.abspath(os.fspath(output_path))]
    if not shuffle:
        args.append("--no-shuffle")
    if output_format:
        args += ["--format", str(output_format)]
    return shlex.join(args)


def script_path(config_path) -> str:
    root, _ = os.path.splitext(os.fspath(config_path))
    return root + ".perturb.sh"


def write_recipe(config, data_path, config_path, output_path, shuffle: bool = True, output_format=None,
                 force: bool = False) -> str:
    """Write the configuration and its command script; return the command line."""
    from ..io.atomic import check_new_output, write_text_atomic
    from .config import save_config
    from .perturb import as_config

    cfg = as_config(config)
    cfg.check_releasable()
    script = script_path(config_path)
    for path in (config_path, script):
        check_new_output(path, [(data_path, "input file")], "recipe file", force)
    command = perturb_command(data_path, config_path, output_path, shuffle, output_format)
    save_config(cfg, config_path)
    write_text_atomic(
        script,
        "#!/bin/sh\n# Made by OptRR: applies the release configuration next to this file.\n"
        f"# The input must be the same file (its SHA-256 is kept in the internal audit record of each release).\n"
        f"{command}\n",
    )
    return command
