"""The ``dpnotes`` command line.

Each subcommand lives in its own module of this package and exposes
``register(subparsers)``, which adds its parser and sets ``func`` to a callable
taking the parsed arguments and returning an exit code.  Errors a user can fix
(``ValueError``, ``OSError`` such as an unwritable ``--results``, a run another process
holds: :class:`~dpnotes.executors.lock.RunLocked`, a paper-profile run from a dirty tree)
are printed as one line on stderr with exit code 2, as argparse does for bad arguments; so is a
closed standard output (``dpnotes epsilon ... >&-``). Output cut short by its reader
(``dpnotes run --list | head``) ends quietly with exit code 141, as ``git`` and coreutils do.
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import sys

from dpnotes import __version__

# Module names under dpnotes.cli, in the order they appear in --help.
SUBCOMMANDS = ["run", "campaign", "scoreboard", "results", "epsilon", "noise", "data", "bench", "cost", "plan"]


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
    _plain_help(parser)
    return parser


def _plain_help(parser: argparse.ArgumentParser) -> None:
    """:func:`plain` on the descriptions, epilogs and help texts of ``parser`` and its subparsers."""
    parser.description, parser.epilog = plain(parser.description), plain(parser.epilog)
    for action in parser._actions:
        action.help = plain(action.help)
        if isinstance(action, argparse._SubParsersAction):
            for choice in action._choices_actions:
                choice.help = plain(choice.help)
            for subparser in action.choices.values():
                _plain_help(subparser)


_ROLE = re.compile(r":[a-z]+(?::[a-z]+)?:`~?([^`<]*?)\s*(?:<[^`>]*>)?`")  # :mod:`x`, :func:`~a.b`, :ref:`t <x>`


def plain(text: str | None) -> str | None:
    """The reST of a docstring as terminal text (``--help`` shows the subcommands' module
    docstrings): roles give their text (``:func:`~a.b``` -> b), ````code```` and `x` lose their
    backticks, ``**bold**`` its stars."""
    if not text or not isinstance(text, str):
        return text
    text = _ROLE.sub(lambda m: m.group(1).rsplit(".", 1)[-1] if m.group(0).split("`")[1].startswith("~")
                     else m.group(1), text)
    text = re.sub(r"``(.+?)``", r"\1", text, flags=re.S)
    text = re.sub(r"\*\*(.+?)\*\*", r"\1", text, flags=re.S)
    return re.sub(r"(?<![\w`])`([^`\n]+)`(?![\w`])", r"\1", text)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    if sys.stdout is None:  # started with stdout closed (`>&-`): print() would drop every line silently
        if sys.stderr is not None:
            print(f"dpnotes {args.command}: error: standard output is closed; nothing to write the output to "
                  "(redirect it to a file or /dev/null instead)", file=sys.stderr)
        return 2
    from dpnotes.executors.lock import RunLocked
    from dpnotes.provenance import DirtyTree

    try:
        code = int(args.func(args) or 0)
        sys.stdout.flush()  # a closed pipe shows here, not at exit
        return code
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)  # the interpreter's final flush must not fail too
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    except (ValueError, OSError, RunLocked, DirtyTree) as exc:
        print(f"dpnotes {args.command}: error: {_one_line(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:  # dpnotes run's says what is stored and kept (dpnotes.preflight.Stopped)
        print(f"dpnotes {args.command}: {_one_line(exc) if str(exc) else 'interrupted'}", file=sys.stderr)
        return 130


def _one_line(exc: BaseException) -> str:
    """The message of ``exc`` on one line; an ``OSError`` with the file it is about."""
    if isinstance(exc, OSError) and exc.filename is not None and exc.strerror:
        return f"{exc.filename}: {exc.strerror}"
    return " ".join(str(exc).split()) or type(exc).__name__
