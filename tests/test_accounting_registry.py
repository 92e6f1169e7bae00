"""The accountant registry: pricing ledgers, agreement with today's accountants and dp_accounting."""

import dataclasses
import json
import math

import numpy as np
import pytest
from dp_accounting.dp_event import LaplaceDpEvent, UnsupportedDpEvent
from dp_accounting.rdp.rdp_privacy_accountant import RdpAccountant as GoogleRdpAccountant

from dpnotes import claims
from dpnotes.accounting import ACCOUNTANTS, epsilon, rdp_to_epsilon, resolve_orders, subsampled_gaussian_rdp
from dpnotes.accounting.calibrate import max_steps, noise_multiplier
from dpnotes.accounting.dpis import DPISAccountant
from dpnotes.accounting.registry import ACCOUNTANT_NAMES, UnsupportedEventError, accountant, price
from dpnotes.accounting.sadpsgd import sadpsgd_epsilon, sadpsgd_epsilon_sound
from dpnotes.cli import main
from dpnotes.experiments.gdp import mechanism
from dpnotes.ledger import (
    CandidateStepDpEvent,
    ComposedDpEvent,
    DpisIterationDpEvent,
    GaussianDpEvent,
    LabelRandomizedResponseDpEvent,
    Ledger,
    NonPrivateDpEvent,
    NoOpDpEvent,
    PoissonSampledDpEvent,
    SelfComposedDpEvent,
)

DELTA = 1e-5
FAST = tuple(n for n in ACCOUNTANT_NAMES if accountant(n).cheap)
RECORD_LEVEL = tuple(n for n in ACCOUNTANT_NAMES if n != "pure")


def sgm(q, sigma):
    return PoissonSampledDpEvent(q, GaussianDpEvent(sigma))


SEGMENTS = [(0.01, 1.0, 300), (0.05, 2.0, 120), (0.002, 0.8, 2000)]


def three_segments():
    ledger = Ledger()
    for q, sigma, steps in SEGMENTS:
        for _ in range(steps):  # one append per step, as the training loop does
            ledger.append(sgm(q, sigma))
    return ledger


def test_registry_metadata():
    assert set(ACCOUNTANT_NAMES) == {"rdp", "rdp-classic", "clt", "prv", "pld", "dpis", "sadpsgd-accepted-only", "pure"}
    assert ACCOUNTANTS == ("rdp", "rdp-classic", "clt", "pld")
    assert {accountant(n).guarantee for n in ACCOUNTANT_NAMES} == {"upper bound", "approximation", "unsound"}
    assert accountant("clt").guarantee == "approximation"
    assert accountant("sadpsgd-accepted-only").guarantee == "unsound"
    assert "NOT a sound" in accountant("sadpsgd-accepted-only").description
    assert not accountant("prv").cheap and not accountant("pld").cheap and accountant("rdp").cheap
    assert accountant("prv").epsilon_key == "upper"
    with pytest.raises(ValueError, match="accountant"):
        accountant("moments")


# --- today's DP-SGD numbers from a one-entry ledger -------------------------------------------

@pytest.mark.parametrize("row", range(1, 7))
def test_gdp_table1_cells_from_a_ledger(row):
    m = mechanism(f"table1.row{row}")
    ledger = Ledger().append(sgm(m.q, m.sigma), m.steps)
    out = price(ledger, m.delta, ["rdp-classic", "clt"])
    assert out["rdp-classic"]["epsilon"] == m.eps_ma
    assert out["clt"] == {"mu": m.mu, "epsilon": m.eps_clt}
    for key, value in (("eps_ma", out["rdp-classic"]["epsilon"]), ("eps_clt", out["clt"]["epsilon"])):
        claim = claims.get(f"gdp.table1.row{row}.{key}")
        assert round(value, claim.decimals) == pytest.approx(claim.number, abs=1e-12)


def test_table1_step_counts_are_fractional():
    assert any(mechanism(f"table1.row{row}").steps % 1 for row in range(1, 7))  # epochs * n / B


def test_epsilon_wrapper_is_the_registry():
    q, sigma, steps = 256 / 60000, 1.1, 14062.5
    event = SelfComposedDpEvent(sgm(q, sigma), steps)
    for name in ("rdp", "rdp-classic", "clt", "dpis", "sadpsgd-accepted-only"):
        assert epsilon(q, sigma, steps, DELTA, name) == {name: accountant(name).price(event, DELTA)}
    assert epsilon(q, sigma, steps, DELTA, "rdp")["rdp"]["epsilon"] == rdp_to_epsilon(
        subsampled_gaussian_rdp(q, sigma, steps, "opacus"), resolve_orders("opacus"), DELTA, "improved")[0]


# --- heterogeneous ledgers ---------------------------------------------------------------------

def test_rdp_of_segments_is_the_sum_of_curves():
    ledger = three_segments()
    assert len(ledger) == 3 and ledger.total_count == 2420
    for name, orders, conversion in [("rdp", "opacus", "improved"), ("rdp-classic", "tf-tutorial", "classic")]:
        total = sum(subsampled_gaussian_rdp(q, s, t, orders) for q, s, t in SEGMENTS)
        eps, order = rdp_to_epsilon(total, resolve_orders(orders), DELTA, conversion)
        got = accountant(name).price(ledger, DELTA)
        assert got["epsilon"] == pytest.approx(eps, rel=1e-12) and got["order"] == order
    single = accountant("rdp").price(Ledger([(sgm(*SEGMENTS[0][:2]), SEGMENTS[0][2])]), DELTA)["epsilon"]
    assert accountant("rdp").price(ledger, DELTA)["epsilon"] > single


def test_rdp_agrees_with_dp_accounting_at_integer_orders():
    ledger = three_segments()
    ledger.append(GaussianDpEvent(20.0), 3)
    orders = [float(a) for a in range(2, 65)]
    ours = dataclasses.replace(accountant("rdp"), orders=tuple(orders)).price(ledger, DELTA)
    theirs = GoogleRdpAccountant(orders=orders).compose(ledger.as_event())
    assert ours["epsilon"] == pytest.approx(theirs.get_epsilon(DELTA), rel=1e-9)
    assert accountant("dpis").price(ledger, DELTA)["epsilon"] == pytest.approx(ours["epsilon"], rel=1e-15)


def test_nested_composition_multiplies_counts():
    a, b = sgm(0.01, 1.0), GaussianDpEvent(10.0)
    nested = SelfComposedDpEvent(ComposedDpEvent([a, SelfComposedDpEvent(b, 2), NoOpDpEvent()]), 3)
    flat = Ledger([(a, 3), (b, 6)])
    for name in FAST:
        if name != "pure":
            got, want = accountant(name).price(nested, DELTA), accountant(name).price(flat, DELTA)
            assert got == pytest.approx(want, rel=1e-12)


def test_clt_adds_mu_squared():
    ledger = Ledger([(sgm(0.01, 1.0), 400), (GaussianDpEvent(5.0), 4)])
    mu2 = 400 * 0.01**2 * math.expm1(1.0) + 4 / 25
    assert accountant("clt").price(ledger, DELTA)["mu"] == pytest.approx(math.sqrt(mu2), rel=1e-14)


@pytest.mark.slow
@pytest.mark.parametrize(
    "entries",
    [
        [(sgm(0.01, 1.0), 500)],
        [(sgm(256 / 60000, 1.1), 14062.5)],
        [(sgm(0.01, 1.0), 300), (sgm(0.05, 2.0), 120), (GaussianDpEvent(8.0), 2)],
    ],
)
def test_pld_within_prv_bounds(entries):
    ledger = Ledger(entries)
    out = price(ledger, DELTA, ["pld", "prv"])
    assert out["prv"]["lower"] - 2e-3 <= out["pld"]["epsilon"] <= out["prv"]["upper"] + 2e-3


def test_pld_and_prv_round_fractional_counts_up():
    step = sgm(0.01, 1.0)
    for name in ("pld", "prv"):
        acc = accountant(name)
        assert acc.price(Ledger([(step, 99.2)]), DELTA) == acc.price(Ledger([(step, 100)]), DELTA)


def test_prv_of_one_event_is_todays_prv():
    from dpnotes.accounting import prv_epsilon

    priced = accountant("prv").price(SelfComposedDpEvent(sgm(0.01, 1.0), 250), DELTA)
    assert priced == prv_epsilon(0.01, 1.0, 250, DELTA)._asdict()


# --- refusals ----------------------------------------------------------------------------------

LABEL = LabelRandomizedResponseDpEvent(epsilon=2.0, num_classes=10, mechanism="rr")


@pytest.mark.parametrize("name", ACCOUNTANT_NAMES)
@pytest.mark.parametrize(
    "event, type_name",
    [
        (LaplaceDpEvent(1.0), "LaplaceDpEvent"),
        (UnsupportedDpEvent(), "UnsupportedDpEvent"),
        (PoissonSampledDpEvent(0.1, LaplaceDpEvent(1.0)), "PoissonSampledDpEvent of LaplaceDpEvent"),
    ],
)
def test_every_accountant_refuses_what_it_cannot_price(name, event, type_name):
    acc = accountant(name)
    ledger = Ledger([(sgm(0.01, 1.0) if name != "pure" else LABEL, 10), (event, 1)])  # never skipped
    assert not acc.supports(ledger) and not acc.supports(event)
    with pytest.raises(UnsupportedEventError, match=type_name):
        acc.price(ledger, DELTA)
    with pytest.raises(UnsupportedEventError, match=name):
        price(CandidateStepDpEvent(event, accepted=True), DELTA, [name])


@pytest.mark.parametrize("name", RECORD_LEVEL)
def test_record_level_accountants_refuse_label_event(name):
    assert not accountant(name).supports(LABEL)
    with pytest.raises(UnsupportedEventError, match="LabelRandomizedResponseDpEvent.*neighbouring"):
        accountant(name).price(Ledger([(sgm(0.01, 1.0), 5), (LABEL, 1)]), DELTA)
    assert issubclass(UnsupportedEventError, ValueError)


def test_pure_composes_label_releases_and_refuses_gaussians():
    ledger = Ledger([(LABEL, 2), (LabelRandomizedResponseDpEvent(0.5, 2, "rr-with-prior"), 1)])
    assert accountant("pure").price(ledger, DELTA) == {"epsilon": 4.5}
    assert accountant("pure").price(LabelRandomizedResponseDpEvent(math.inf, 10, "rr"), DELTA) == {"epsilon": math.inf}
    with pytest.raises(UnsupportedEventError, match="GaussianDpEvent"):
        accountant("pure").price(GaussianDpEvent(1.0), DELTA)


def test_bad_counts_and_parameters_are_errors():
    with pytest.raises(ValueError, match="count"):
        accountant("rdp").price(SelfComposedDpEvent(sgm(0.01, 1.0), 0), DELTA)
    with pytest.raises(ValueError, match="sigma"):
        accountant("clt").price(GaussianDpEvent(0.0), DELTA)
    with pytest.raises(ValueError, match="q"):
        accountant("rdp").price(sgm(1.5, 1.0), DELTA)
    with pytest.raises(ValueError, match="delta"):
        price(Ledger(), 0.0, "rdp")


# --- defined values -----------------------------------------------------------------------------

@pytest.mark.parametrize("name", ACCOUNTANT_NAMES)
def test_empty_ledger_is_eps_zero_and_non_private_is_inf(name):
    for nothing in (Ledger(), Ledger([(NoOpDpEvent(), 5)])):
        out = accountant(name).price(nothing, DELTA)
        assert out["epsilon"] == 0.0 and set(out) == set(accountant(name).keys)
    released = sgm(0.01, 1.0) if name != "pure" else LABEL
    out = accountant(name).price(Ledger([(released, 3), (NonPrivateDpEvent(), 1)]), DELTA)
    assert out["epsilon"] == math.inf and out.get("upper", math.inf) == math.inf


# --- DPIS ----------------------------------------------------------------------------------------

def test_dpis_event_with_ratio_one_is_the_dpsgd_step():
    b, n_tilde, sigma = 256, 60000.0, 1.1
    dpis = Ledger([(DpisIterationDpEvent(b, n_tilde, 1.0, sigma), 2000)])
    dpsgd = Ledger([(sgm(b / n_tilde, sigma), 2000)])
    for name in ("rdp", "rdp-classic", "clt", "dpis", "pld"):
        assert accountant(name).price(dpis, DELTA) == accountant(name).price(dpsgd, DELTA)


def test_dpis_accountant_prices_a_dpis_run_as_the_paper():
    acc = DPISAccountant(batch_size=256, n_tilde=60012.5, steps_per_epoch=234, epochs=3,
                         sigma_n=1200.0, sigma_k=5.0, adaptive_clipping=True)
    ratios, sigmas = [0.9, 0.6, 0.45], [1.3, 1.2, 1.25]
    p_k = acc.batch_size / acc.n_tilde
    ledger = Ledger().append(GaussianDpEvent(acc.sigma_n))  # N~, Eq. (18)
    for r, s in zip(ratios, sigmas):
        ledger.append(sgm(p_k, acc.sigma_k * p_k))  # K~_{e,1}, Eq. (11)
        ledger.append(DpisIterationDpEvent(acc.batch_size, acc.n_tilde, r, s), acc.steps_per_epoch)
        ledger.append(GaussianDpEvent(acc.sigma_k))  # K~*_e, line 35
    eps, order = acc.epsilon(ratios, sigmas, DELTA)
    got = accountant("dpis").price(ledger, DELTA)
    assert got["epsilon"] == pytest.approx(eps, rel=1e-12) and got["order"] == order


# --- SA-DPSGD -------------------------------------------------------------------------------------

def test_accepted_only_versus_sound():
    q, sigma = 0.004, 1.2
    accepted = [i % 3 != 1 for i in range(600)]
    ledger = Ledger()
    for a in accepted:
        ledger.append(CandidateStepDpEvent(sgm(q, sigma), accepted=a))
    paper = accountant("sadpsgd-accepted-only")
    sound = dataclasses.replace(paper, accepted_only=False)
    tau = sum(accepted)
    assert paper.price(ledger, DELTA)["epsilon"] == pytest.approx(sadpsgd_epsilon(q, sigma, tau, DELTA)[0], rel=1e-12)
    expected = sadpsgd_epsilon_sound(q, sigma, 600, DELTA)[0]
    assert sound.price(ledger, DELTA)["epsilon"] == pytest.approx(expected, rel=1e-12)
    assert sound.price(ledger, DELTA)["epsilon"] > paper.price(ledger, DELTA)["epsilon"]
    everything = Ledger([(CandidateStepDpEvent(sgm(q, sigma), accepted=True), 600)])
    assert paper.price(everything, DELTA) == sound.price(everything, DELTA)
    for name in ("rdp", "rdp-classic", "clt", "dpis"):  # sound accountants ignore `accepted`
        acc = accountant(name)
        assert acc.price(ledger, DELTA) == pytest.approx(acc.price(everything, DELTA), rel=1e-12)


# --- scale ------------------------------------------------------------------------------------------

def test_long_ledger_is_priced_per_distinct_event():
    # Structural, not timed: 100,000 equal steps are one run-length entry, so pricing costs one
    # RDP curve per distinct event, not per step.
    ledger = Ledger()
    for _ in range(100_000):
        ledger.append(sgm(0.001, 1.0))
    for epoch in range(50):
        ledger.append(DpisIterationDpEvent(100, 100_000, 0.5 + epoch / 100, 1.0), 1000)
    assert len(ledger.entries) == 51 and sum(c for _, c in ledger.entries) == 150_000
    out = price(ledger, DELTA, [n for n in FAST if n in RECORD_LEVEL])
    assert np.isfinite([v["epsilon"] for v in out.values()]).all()


# --- CLI and calibration with pld ------------------------------------------------------------------

def test_cli_epsilon_pld(capsys):
    argv = ["epsilon", "--sample-rate", "0.01", "--steps", "100", "--delta", "1e-5", "--noise-multiplier", "1.0"]
    assert main([*argv, "--accountant", "pld", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == epsilon(0.01, 1.0, 100, DELTA, "pld")  # the library's grid
    assert main([*argv, "--accountant", "pld", "--pld-discretization", "1e-3", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == epsilon(0.01, 1.0, 100, DELTA, "pld", pld_discretization=1e-3)
    assert main([*argv, "--accountant", "pld"]) == 0
    assert "pld" in capsys.readouterr().out


@pytest.mark.slow
def test_calibration_with_pld():
    eps = lambda s, t: epsilon(0.01, s, t, DELTA, "pld")["pld"]["epsilon"]  # noqa: E731
    sigma = noise_multiplier(1.0, 0.01, 100, DELTA, accountant="pld", tol=1e-3)
    assert eps(sigma, 100) <= 1.0 < eps(sigma / 1.01, 100)
    t = max_steps(0.5, 0.01, 1.0, DELTA, accountant="pld")
    assert eps(1.0, t) <= 0.5 < eps(1.0, t + 1)
