"""``dpnotes epsilon`` and ``dpnotes noise``: JSON keys, agreement with the library, one-line errors."""

import json

import pytest

from dpnotes.accounting import epsilon, noise_multiplier
from dpnotes.cli import main

RUN = ["--batch-size", "256", "--dataset-size", "60000", "--epochs", "60", "--delta", "1e-5"]


def _json(capsys, argv):
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1
    return json.loads(out)


@pytest.mark.parametrize("accountant", ["rdp", "rdp-classic", "clt"])
def test_epsilon_json_matches_library(capsys, accountant):
    got = _json(capsys, ["epsilon", *RUN, "--noise-multiplier", "1.1", "--accountant", accountant, "--json"])
    assert got == epsilon(256 / 60000, 1.1, 60 * 60000 / 256, 1e-5, accountant)


def test_epsilon_all_keys_and_table(capsys):
    got = _json(capsys, ["epsilon", "--sample-rate", "0.01", "--steps", "100", "--delta", "1e-5",
                         "--noise-multiplier", "1.0", "--json"])
    assert set(got) == {"rdp", "rdp-classic", "clt", "pld"}
    assert set(got["pld"]) == {"epsilon"} and set(got["clt"]) == {"mu", "epsilon"}
    assert got["pld"] == epsilon(0.01, 1.0, 100, 1e-5, "pld")["pld"]  # one default grid: the library's
    assert main(["epsilon", "--sample-rate", "0.01", "--steps", "100", "--delta", "1e-5",
                 "--noise-multiplier", "1.0"]) == 0
    lines = capsys.readouterr().out.splitlines()
    meaning = {line.split()[0]: line for line in lines[2:]}
    assert "approximation, may under-state eps" in meaning["clt"]
    assert "certified upper bound" in meaning["pld"]


def test_prv_line_prints_its_certified_upper_bound(capsys):
    argv = ["epsilon", "--sample-rate", "0.01", "--steps", "100", "--delta", "1e-5", "--noise-multiplier", "1.0",
            "--accountant", "prv"]
    got = _json(capsys, [*argv, "--json"])["prv"]
    assert got["lower"] <= got["epsilon"] <= got["upper"]
    assert main(argv) == 0
    line = capsys.readouterr().out.splitlines()[-1]
    assert float(line.split()[1]) == pytest.approx(got["upper"], rel=1e-5)
    assert "certified upper bound" in line and "lower bound" in line


def test_orders_option(capsys):
    got = _json(capsys, ["epsilon", *RUN, "--noise-multiplier", "1.1", "--accountant", "rdp-classic",
                         "--orders", "integer", "--json"])
    assert got["rdp-classic"]["order"] % 1 == 0


def test_noise_json(capsys):
    got = _json(capsys, ["noise", *RUN, "--target-epsilon", "2", "--accountant", "clt", "--json"])
    assert got["clt"]["noise_multiplier"] == noise_multiplier(2, 256 / 60000, 60 * 60000 / 256, 1e-5, accountant="clt")
    assert got["clt"]["epsilon"] <= 2


@pytest.mark.parametrize(
    "argv",
    [
        ["epsilon", *RUN, "--noise-multiplier", "0"],
        ["epsilon", *RUN, "--noise-multiplier", "1", "--sample-rate", "0.1"],
        ["epsilon", "--sample-rate", "1.5", "--steps", "10", "--delta", "1e-5", "--noise-multiplier", "1"],
        ["epsilon", "--sample-rate", "0.1", "--delta", "1e-5", "--noise-multiplier", "1"],
        ["epsilon", "--sample-rate", "0.1", "--steps", "10", "--epochs", "1", "--delta", "1e-5",
         "--noise-multiplier", "1"],
        ["epsilon", "--sample-rate", "0.1", "--steps", "-3", "--delta", "1e-5", "--noise-multiplier", "1"],
        ["epsilon", "--sample-rate", "0.1", "--steps", "10", "--delta", "2", "--noise-multiplier", "1"],
        ["noise", *RUN, "--target-epsilon", "-1"],
    ],
)
def test_invalid_input_one_line_error(capsys, argv):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "error" in err


def test_unknown_accountant_exits_nonzero(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["epsilon", *RUN, "--noise-multiplier", "1", "--accountant", "moments"])
    assert exc.value.code != 0


@pytest.mark.parametrize("argv, run", [
    (["--batch-size", "256", "--dataset-size", "60000", "--epochs", "15", "--noise-multiplier", "1.1"],
     (256 / 60000, 1.1, 15 * 60000 / 256)),
    (["--sample-rate", "0.01", "--steps", "1000", "--noise-multiplier", "0.8"], (0.01, 0.8, 1000)),
])
def test_cli_and_library_price_a_run_alike_and_the_default_pld_grid_is_an_upper_bound(capsys, argv, run):
    """The CLI's and the library's default PLD grids are one (the same eps, to the last digit), and
    that grid's eps is a certified upper bound: above dp_accounting's optimistic (lower) estimate on a
    finer grid, and no looser than the coarse grid 1e-3."""
    from dp_accounting.pld import privacy_loss_distribution

    from dpnotes.accounting.pld import DEFAULT_DISCRETIZATION, pld_epsilon
    from dpnotes.accounting.rdp import integer_steps

    got = _json(capsys, ["epsilon", *argv, "--delta", "1e-5", "--accountant", "pld", "--json"])["pld"]["epsilon"]
    q, sigma, steps = run
    assert got == epsilon(q, sigma, steps, 1e-5, "pld")["pld"]["epsilon"]
    assert got == pld_epsilon([(q, sigma, integer_steps(steps))], 1e-5, DEFAULT_DISCRETIZATION)
    lower = privacy_loss_distribution.from_gaussian_mechanism(
        sigma, sampling_prob=q, pessimistic_estimate=False, use_connect_dots=False,
        value_discretization_interval=DEFAULT_DISCRETIZATION / 2).self_compose(integer_steps(steps))
    assert lower.get_epsilon_for_delta(1e-5) <= got <= pld_epsilon([(q, sigma, integer_steps(steps))], 1e-5, 1e-3)
