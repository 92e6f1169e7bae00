"""dpnotes' own PLD accountant (connect the dots, numpy only) against dp_accounting's, the exact
Gaussian mechanism, and the RDP upper bound."""

import math

import numpy as np
import pytest
from dp_accounting import dp_event
from dp_accounting.pld import privacy_loss_distribution
from dp_accounting.pld.pld_privacy_accountant import PLDAccountant
from hypothesis import given, settings
from hypothesis import strategies as st

from dpnotes.accounting import epsilon_from_mu, rdp_epsilon
from dpnotes.accounting.grid import GridTooLargeError
from dpnotes.accounting.pld import pld_epsilon


def _theirs(mechanisms, delta, h, pessimistic=True):
    if pessimistic:
        acc = PLDAccountant(value_discretization_interval=h)
        for q, sigma, count in mechanisms:
            acc.compose(dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(sigma)), count)
        return acc.get_epsilon(delta)
    pld = None
    for q, sigma, count in mechanisms:  # optimistic: a lower estimate (Privacy Buckets rounding down)
        one = privacy_loss_distribution.from_gaussian_mechanism(
            sigma, sampling_prob=q, pessimistic_estimate=False, use_connect_dots=False,
            value_discretization_interval=h).self_compose(count)
        pld = one if pld is None else pld.compose(one)
    return pld.get_epsilon_for_delta(delta)


@settings(max_examples=25, deadline=None, derandomize=True)  # dp_accounting has edge cases of its own
@given(q=st.floats(1e-3, 0.5), sigma=st.floats(0.6, 5.0), steps=st.integers(1, 3000),
       log_delta=st.floats(-9, -3))
def test_equals_dp_accounting_and_sits_between_its_bounds(q, sigma, steps, log_delta):
    delta, h = 10**log_delta, 1e-3
    ours = pld_epsilon([(q, sigma, steps)], delta, h)
    theirs = _theirs([(q, sigma, steps)], delta, h)
    if math.isinf(theirs):  # dp_accounting's eps overflows exp(-loss) beyond about 709; ours is in log space
        assert ours > 700
    else:
        assert ours == pytest.approx(theirs, rel=1e-3, abs=2 * h)
    assert ours >= _theirs([(q, sigma, steps)], delta, h, pessimistic=False) - 1e-9
    # Both are upper bounds of the true eps; where eps is of the order of the grid step h the PLD's grid
    # error (the 2h allowed against dp_accounting above) can exceed the RDP bound's slack (q 0.001, sigma
    # 3.25, 585 steps, delta 1e-3: PLD 0.012120, RDP 0.012110).
    assert ours <= rdp_epsilon(q, sigma, steps, delta, orders="tf-compute", conversion="improved")[0] + 2 * h


@pytest.mark.parametrize("sigma, steps", [(0.5, 1), (2.0, 10), (5.0, 1), (1.0, 100)])
def test_gaussian_mechanism_is_exact_up_to_the_grid(sigma, steps):
    """q = 1: T Gaussian steps are exactly mu-GDP with mu = sqrt(T)/sigma (Dong, Roth, Su 2022),
    whose eps(delta) is closed-form; the pessimistic PLD is above it and within the grid."""
    exact = epsilon_from_mu(math.sqrt(steps) / sigma, 1e-5)
    ours = pld_epsilon([(1.0, sigma, steps)], 1e-5, 1e-4)
    assert exact - 1e-9 <= ours <= exact + 1e-3


def test_heterogeneous_composition_equals_dp_accounting():
    mechanisms = [(0.01, 1.1, 500), (0.02, 0.9, 300), (1.0, 8.0, 3)]
    theirs = _theirs(mechanisms[:2], 1e-6, 1e-4)
    assert pld_epsilon(mechanisms[:2], 1e-6, 1e-4) == pytest.approx(theirs, rel=1e-4)
    assert pld_epsilon(mechanisms, 1e-6, 1e-4) > pld_epsilon(mechanisms[:2], 1e-6, 1e-4)


def test_order_of_composition_does_not_matter():
    a, b = (0.01, 1.1, 500), (0.05, 2.0, 40)
    assert pld_epsilon([a, b], 1e-5, 1e-3) == pytest.approx(pld_epsilon([b, a], 1e-5, 1e-3), rel=1e-9)


def test_more_steps_never_less_eps_and_delta_monotone():
    eps = [pld_epsilon([(0.01, 1.0, t)], 1e-5, 1e-3) for t in (1, 10, 100, 1000)]
    assert eps == sorted(eps)
    by_delta = [pld_epsilon([(0.01, 1.0, 1000)], d, 1e-3) for d in (1e-9, 1e-7, 1e-5, 1e-3)]
    assert by_delta == sorted(by_delta, reverse=True)


def test_bad_input_names_the_parameter():
    with pytest.raises(ValueError, match="count"):
        pld_epsilon([(0.1, 1.0, 2.5)], 1e-5)
    with pytest.raises(ValueError, match="sigma"):
        pld_epsilon([(0.1, -1.0, 2)], 1e-5)
    with pytest.raises(ValueError, match="delta"):
        pld_epsilon([(0.1, 1.0, 2)], 0.0)
    with pytest.raises(ValueError, match="discretization"):
        pld_epsilon([(0.1, 1.0, 2)], 1e-5, 0.0)
    with pytest.raises(GridTooLargeError):
        pld_epsilon([(1.0, 0.5, 10**9)], 1e-5, 1e-3)
    assert pld_epsilon([], 1e-5) == 0.0
    assert np.isfinite(pld_epsilon([(1e-4, 50.0, 1)], 1e-5))
