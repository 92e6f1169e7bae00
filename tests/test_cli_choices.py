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
    from dpnotes.accounting.pld import DEFAULT_DISCRETIZATION
    from dpnotes.accounting.registry import accountant

    assert choices.PLD_DISCRETIZATION == DEFAULT_DISCRETIZATION == accountant("pld").discretization


@pytest.mark.parametrize("argv", [["--help"], *([name, "--help"] for name in SUBCOMMANDS)])
def test_help_imports_no_heavy_module(argv):
    # A fresh interpreter: parse the arguments (argparse exits after printing help), then list the
    # heavy modules that got imported. Structural, so it holds on a loaded machine too.
    code = ("import sys\nfrom dpnotes.cli import main\ntry:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
            f"print(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r} or m in {HEAVY!r}))")
    out = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines()[-1] == "[]", (argv, out.stdout.splitlines()[-1])


@pytest.mark.parametrize("accountant", ["all", "rdp", "rdp-classic", "clt", "pld"])
def test_epsilon_imports_no_heavy_module_nor_scipy(accountant):
    """`dpnotes epsilon` answers with numpy and math only: no scipy (about 0.5-1 s to import),
    no dp_accounting, no torch."""
    argv = ["epsilon", "--sample-rate", "0.004", "--steps", "1000", "--noise-multiplier", "1.1",
            "--delta", "1e-5", "--accountant", accountant]
    code = ("import sys\nfrom dpnotes.cli import main\nmain(sys.argv[1:])\n"
            f"print(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY + ('scipy',)!r}))")
    out = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines()[-1] == "[]", out.stdout


def test_cli_sigma_range_is_the_calibrations():
    from dpnotes.accounting.calibrate import SIGMA_RANGE
    from dpnotes.cli.epsilon import SIGMA_RANGE as CLI_RANGE

    assert CLI_RANGE == SIGMA_RANGE
