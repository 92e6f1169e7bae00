"""SA-DPSGD accountant (Theorem 1): against an independent evaluation of the formula; sound >= paper."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import comb, logsumexp

from dpnotes.accounting.sadpsgd import sadpsgd_epsilon, sadpsgd_epsilon_sound


def theorem1(q, sigma, steps, delta):
    """Theorem 1 (with the log that Mironov et al. 2019 has): binomial sum at integer orders 2..64."""
    best = math.inf
    for a in range(2, 65):
        i = np.arange(a + 1)
        terms = np.log(comb(a, i)) + (a - i) * math.log1p(-q) + i * math.log(q) + (i * i - i) / (2 * sigma**2)
        best = min(best, steps * logsumexp(terms) / (a - 1) + math.log(1 / delta) / (a - 1))
    return best


@pytest.mark.parametrize("q, sigma, steps", [(512 / 60000, 1.23, 2000), (2048 / 60000, 2.15, 700),
                                             (1024 / 50000, 1.54, 1500), (0.01, 0.8, 50)])
def test_matches_theorem_1(q, sigma, steps):
    eps, order = sadpsgd_epsilon(q, sigma, steps, 1e-5)
    assert eps == pytest.approx(theorem1(q, sigma, steps, 1e-5), rel=1e-9)
    assert float(order).is_integer() and 2 <= order <= 64


@settings(max_examples=40, deadline=None)
@given(q=st.floats(1e-3, 0.2), sigma=st.floats(0.6, 5.0), accepted=st.integers(1, 3000),
       rejected=st.integers(0, 3000))
def test_sound_bound_is_never_smaller(q, sigma, accepted, rejected):
    paper, _ = sadpsgd_epsilon(q, sigma, accepted, 1e-5)
    sound, _ = sadpsgd_epsilon_sound(q, sigma, accepted + rejected, 1e-5)
    assert sound >= paper - 1e-12
    if rejected == 0:
        assert sound == paper


def test_rejections_cost_privacy():
    paper, _ = sadpsgd_epsilon(512 / 60000, 1.23, 1000, 1e-5)
    sound, _ = sadpsgd_epsilon_sound(512 / 60000, 1.23, 1500, 1e-5)
    assert sound > paper * 1.1


def test_improved_conversion_is_smaller():
    assert sadpsgd_epsilon(0.01, 1.0, 500, 1e-5, conversion="improved")[0] < sadpsgd_epsilon(0.01, 1.0, 500, 1e-5)[0]


@pytest.mark.parametrize("fn", [sadpsgd_epsilon, sadpsgd_epsilon_sound])
@pytest.mark.parametrize("args, name", [
    ((0.0, 1.0, 10, 1e-5), "q"), ((1.5, 1.0, 10, 1e-5), "q"),
    ((0.1, 0.0, 10, 1e-5), "sigma"), ((0.1, -1.0, 10, 1e-5), "sigma"),
    ((0.1, 1.0, 0, 1e-5), "steps"), ((0.1, 1.0, 10.0, 1e-5), "steps"),
    ((0.1, 1.0, 10, 0.0), "delta"), ((0.1, 1.0, 10, 1.0), "delta"),
])
def test_invalid_input(fn, args, name):
    with pytest.raises(ValueError, match=name):
        fn(*args)
