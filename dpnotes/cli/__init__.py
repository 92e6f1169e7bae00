"""The ``dpnotes`` command line.

Each subcommand lives in its own module of this package and exposes
``register(subparsers)``, which adds its parser and sets ``func`` to a callable
taking the parsed arguments and returning an exit code.  Errors a user can fix
(``ValueError``, ``FileNotFoundError``) are printed as one line on stderr with
exit code 2.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from dpnotes import __version__

# Module names under dpnotes.cli, in the order they appear in --help.
SUBCOMMANDS = ["run", "scoreboard", "results", "epsilon", "noise", "data", "bench"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dpnotes",
        description="Reproduce differentially private deep-learning papers: "
        "privacy accounting, DP training runs, and paper-vs-ours scoreboards.",
    )
    parser.add_argument("--version", action="version", version=f"dpnotes {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in SUBCOMMANDS:
        try:
            module = importlib.import_module(f"dpnotes.cli.{name}")
        except ModuleNotFoundError as exc:  # a subcommand not written yet
            if exc.name != f"dpnotes.cli.{name}":
                raise
            continue
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    try:
        return int(args.func(args) or 0)
    except (ValueError, FileNotFoundError) as exc:
        print(f"dpnotes {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"dpnotes {args.command}: interrupted", file=sys.stderr)
        return 130
