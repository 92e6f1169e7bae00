"""Sampling against accounting (dpnotes.audit.sampling): what is mathematically guaranteed between
the four schemes, the closed form against the PLD accountant, the one-epoch Monte Carlo audit
against the exact laws, and the per-paper settings as the registry prints them."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpnotes import claims
from dpnotes.accounting.registry import price
from dpnotes.audit import sampling
from dpnotes.audit.mechanisms import gaussian_epsilon
from dpnotes.ledger import GaussianDpEvent, Ledger, PoissonSampledDpEvent

DELTA = 1e-5


@pytest.fixture(scope="module")
def first_of_each_paper():
    return [f()[0] for f in sampling.SETTINGS.values()]


def test_no_amplification_bounds_every_amplified_eps(first_of_each_paper):
    for s in first_of_each_paper:
        eps = sampling.schemes(s)
        assert eps["fixed"] >= eps["poisson"], s
        assert eps["fixed"] >= eps["shuffle_lower"], s
        # without replacement is priced under replace-one (sensitivity 2): its unsampled step is sigma/2
        # (RDP's conversion adds slack, so this holds where amplification is large, as at these q)
        assert sampling.fixed_batches_epsilon(s.sigma, s.steps, s.delta, sensitivity=2.0) >= eps["without_replacement"]


@settings(max_examples=8, deadline=None)
@given(st.floats(0.5, 3.0), st.integers(2, 60), st.integers(1, 6))
def test_shuffle_lower_bound_below_the_epochs_gaussian(sigma, b, epochs):
    # each epoch's pair is a mixture of Gaussian pairs with shift 1 (joint convexity): at most
    # one Gaussian per epoch, mu = sqrt(epochs) / sigma
    lower = sampling.shuffle_lower_bound(sigma, b, epochs, DELTA)
    assert 0 <= lower <= gaussian_epsilon(sigma / math.sqrt(epochs), DELTA) + 1e-9


def test_shuffle_lower_bound_equals_gaussian_with_one_batch():
    # b = 1: MoG(2) vs MoG(1) is N(2, s^2) vs N(1, s^2), the Gaussian itself; the lower bound is
    # tight up to its loss grid
    for sigma in (0.8, 2.0):
        exact = gaussian_epsilon(sigma, DELTA)
        assert sampling.shuffle_lower_bound(sigma, 1, 1, DELTA) == pytest.approx(exact, abs=5e-3)


@pytest.mark.parametrize("sigma, steps", [(1.0, 1), (2.0, 10), (5.0, 100)])
def test_composed_gaussian_closed_form_equals_pld(sigma, steps):
    closed = sampling.fixed_batches_epsilon(sigma, steps, DELTA)
    pld = price(Ledger().append(GaussianDpEvent(sigma), steps), DELTA, "pld")["pld"]["epsilon"]
    assert closed <= pld + 1e-9  # the PLD is a pessimistic upper bound
    assert pld - closed < 1e-3 * max(1.0, closed)  # within its discretization


def test_poisson_column_is_the_registry_pld():
    q, sigma, steps = 0.01, 1.1, 500
    event = PoissonSampledDpEvent(q, GaussianDpEvent(sigma))
    ledger_eps = price(Ledger().append(event, steps), DELTA, "pld")["pld"]["epsilon"]
    assert sampling.poisson_epsilon(q, sigma, steps, DELTA) == ledger_eps


def test_monte_carlo_below_exact_shuffle_eps_and_above_poisson():
    sigma, b = 0.7, 234
    mc = sampling.monte_carlo_one_epoch(sigma, b, DELTA, "shuffle", samples=20_000, seed=0)
    for hat, exact in ((mc["p_hat"], mc["p_exact"]), (mc["q_hat"], mc["q_exact"])):
        lo, hi = sampling.clopper_pearson(round(hat * mc["samples"]), mc["samples"], 0.999)
        assert lo <= exact <= hi
    assert mc["eps_lower"] <= mc["eps_test_exact"]
    assert mc["eps_test_exact"] <= sampling.shuffle_lower_bound(sigma, b, 1, DELTA) + 1e-2
    # Chua et al.'s finding, by simulation: shuffled batches leak more than Poisson's upper bound
    assert mc["eps_lower"] > sampling.poisson_epsilon(1 / b, sigma, b, DELTA)


def test_monte_carlo_poisson_stays_below_its_accountant():
    sigma, b = 0.7, 234
    mc = sampling.monte_carlo_one_epoch(sigma, b, DELTA, "poisson", samples=20_000, seed=1)
    assert 0 <= mc["eps_lower"] <= sampling.poisson_epsilon(1 / b, sigma, b, DELTA)


def test_settings_are_the_registrys():
    gdp = sampling.gdp_settings()
    assert [s.sigma for s in gdp] == [claims.setting(f"gdp.table1.row{i}.sigma") for i in range(1, 7)]
    assert all(s.delta == claims.setting("gdp.mnist.delta") for s in gdp)
    assert all(s.batch_size == claims.setting("gdp.mnist.batch_size") for s in gdp)
    sa = {s.run.split(",")[0]: s for s in sampling.sadpsgd_settings()}
    for ds in ("mnist", "fmnist", "cifar10"):
        assert sa[ds].sigma == claims.setting(f"sadpsgd.table2.{ds}.sigma")
        assert sa[ds].batch_size == claims.setting(f"sadpsgd.table2.{ds}.batch_size")
        assert sa[ds].delta == claims.setting(f"sadpsgd.table2.{ds}.delta")
    dplis = sampling.dplis_settings()
    assert [s.sigma for s in dplis] == [claims.setting(f"dplis.table1.{d}.sigma") for d in ("mnist", "cifar10")]
    assert all(s.delta == claims.setting("dplis.setup.delta") for s in dplis)
    assert all(s.delta == claims.setting("dpis.setup.delta") for s in sampling.dpis_settings())
    assert set(sampling.CODE_SAMPLING) == set(claims.PAPERS)


@pytest.mark.parametrize("call, name", [
    (lambda: sampling.shuffle_lower_bound(0.0, 10, 1, DELTA), "sigma"),
    (lambda: sampling.shuffle_lower_bound(1.0, 0, 1, DELTA), "steps_per_epoch"),
    (lambda: sampling.without_replacement_epsilon(100, 100, 1.0, 10, DELTA), "batch_size"),
    (lambda: sampling.monte_carlo_one_epoch(1.0, 10, DELTA, "balls"), "scheme"),
    (lambda: sampling.fixed_batches_epsilon(1.0, 10, 1.5), "delta"),
])
def test_bad_inputs_name_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_examples_left_over_only_lower_the_shuffle_bound():
    # an epoch that may leave the example out is a mixture with the null pair: never more leakage
    full = sampling.shuffle_lower_bound(1.0, 20, 3, DELTA)
    assert sampling.shuffle_lower_bound(1.0, 20, 3, DELTA, dropped=0.3) < full
    assert sampling.shuffle_lower_bound(1.0, 20, 3, DELTA, dropped=1e-12) == pytest.approx(full, abs=1e-6)


@pytest.mark.parametrize("paper", claims.PAPERS)
def test_engine_column_matches_the_experiments_train_configs(paper):
    import importlib

    from dpnotes.train.config import TrainConfig

    default = TrainConfig.__dataclass_fields__["sampling"].default
    trains = [c["train"] for c in importlib.import_module(f"dpnotes.experiments.{paper}").configs("smoke")]
    drawn = {t.get("sampling", default) for t in trains if t.get("private", True)}
    assert drawn == ({sampling.ENGINE[paper][0]} if sampling.ENGINE[paper][0] != "not applicable" else set())


@pytest.mark.parametrize("change, name", [({"n": 10.5}, "n"), ({"batch_size": 100}, "batch_size"),
                                          ({"sigma": -1.0}, "sigma"), ({"steps": 0}, "steps"),
                                          ({"delta": 1.0}, "delta")])
def test_a_setting_refuses_bad_values(change, name):
    values = {"paper": "gdp", "run": "x", "n": 100, "batch_size": 10, "sigma": 1.0, "steps": 5, "delta": DELTA}
    with pytest.raises(ValueError, match=name):
        sampling.Setting(**{**values, **change})
