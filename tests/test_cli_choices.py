"""The CLI's static choices equal the registry's, and `dpnotes --help` imports nothing heavy."""

import subprocess
import sys

import pytest

from dpnotes.accounting import ACCOUNTANTS, ORDERS, SGM_ACCOUNTANTS
from dpnotes.cli import SUBCOMMANDS, choices

HEAVY = ("torch", "opacus", "dp_accounting", "prv_accountant", "pandas", "scipy.stats", "scipy.signal")


def test_static_choices_equal_the_registry():
    assert choices.SGM_ACCOUNTANTS == SGM_ACCOUNTANTS
    assert choices.ALL_ACCOUNTANTS == ACCOUNTANTS
    assert choices.ORDER_NAMES == tuple(sorted(ORDERS))


@pytest.mark.parametrize("argv", [["--help"], *([name, "--help"] for name in SUBCOMMANDS)])
def test_help_imports_no_heavy_module(argv):
    # A fresh interpreter: parse the arguments (argparse exits after printing help), then list the
    # heavy modules that got imported. Structural, so it holds on a loaded machine too.
    code = ("import sys\nfrom dpnotes.cli import main\ntry:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
            f"print(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r} or m in {HEAVY!r}))")
    out = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines()[-1] == "[]", (argv, out.stdout.splitlines()[-1])
