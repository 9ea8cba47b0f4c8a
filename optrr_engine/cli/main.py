"""Entry point of ``optrr``: subcommands are registered lazily so start-up stays fast.

Exit codes: 0 success, 2 bad input (one line on stderr saying what to fix), 130 cancelled, 143 terminated
(SIGTERM), 1 when the reader of the output went away (``optrr estimate ... | head -1``: quietly, as Python's
documentation on SIGPIPE advises).
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import sys

from .interrupts import Terminated, handled, held

#: subcommand name -> module in optrr_engine.cli with ``add_parser(subparsers)`` and ``run(args)``.
COMMANDS = {
    "design": "design_cmd",
    "estimate": "estimate_cmd",
    "analyze": "analyze_cmd",
    "compare": "compare_cmd",
    "schema": "schema_cmd",
    "perturb": "perturb_cmd",
    "keygen": "keygen_cmd",
}


def build_parser() -> argparse.ArgumentParser:
    from .. import __version__

    parser = argparse.ArgumentParser(
        prog="optrr", description="Privacy-optimized randomized response for categorical data."
    )
    parser.add_argument("--version", action="version", version=f"optrr {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in COMMANDS.values():
        mod = importlib.import_module(f".{module}", __package__)
        p = mod.add_parser(sub)
        p.set_defaults(_run=mod.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one command; return its exit code. Every Ctrl-C / SIGTERM, from the first instant (building the parser,
    importing the commands) to the last, ends in one line and exit 130 / 143 (:mod:`.interrupts`); one received past
    a command's commit point lets the command finish and is reported as such."""
    try:
        with handled(restore=argv is not None):
            code = _main(argv)
            if held() is not None and code == 0:
                print(
                    "optrr: interrupt received after the release was written; the release is complete", file=sys.stderr
                )
            return code
    except Terminated:
        print("optrr: terminated", file=sys.stderr)
        return 143
    except KeyboardInterrupt:
        print("optrr: interrupted", file=sys.stderr)
        return 130


_NEGATIVE = re.compile(r"-\.?\d")


def negative_values_joined(parser: argparse.ArgumentParser, argv: list[str]) -> list[str]:
    """``argv`` with a negative value joined to the option before it ("--epsilons", "-1,1" -> "--epsilons=-1,1"):
    argparse reads a text starting with "-" as another option ("expected one argument"), so the value's own check
    never said what is wrong with it. Only long options of the command given that take one value are joined."""
    commands = next((a.choices for a in parser._actions if isinstance(a, argparse._SubParsersAction)), {})
    command = next((commands[t] for t in argv if t in commands), parser)
    valued = {
        option
        for action in command._actions
        if action.nargs is None and action.option_strings
        for option in action.option_strings
        if option.startswith("--")
    }
    out: list[str] = []
    for token in argv:
        if out and out[-1] in valued and _NEGATIVE.match(token):
            out[-1] = f"{out[-1]}={token}"
        else:
            out.append(token)
    return out


def _main(argv) -> int:
    from ..errors import Cancelled, OptRRError

    try:
        parser = build_parser()
        args = parser.parse_args(negative_values_joined(parser, sys.argv[1:] if argv is None else list(argv)))
        if not getattr(args, "_run", None):
            parser.print_help()
            return 2
        code = int(args._run(args) or 0)
        sys.stdout.flush()  # a closed pipe shows up here at the latest
        return code
    except BrokenPipeError:
        # https://docs.python.org/3/library/signal.html#note-on-sigpipe: point stdout at devnull so the
        # interpreter's final flush does not fail again, and exit quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except Cancelled:
        print("optrr: cancelled", file=sys.stderr)
        return 130
    except OptRRError as exc:
        print(f"optrr: error: {exc}", file=sys.stderr)
        return 2
    except MemoryError:
        print(
            "optrr: error: not enough memory for this request; ask for smaller tables or fewer columns", file=sys.stderr
        )
        return 2


if __name__ == "__main__":
    sys.exit(main())
