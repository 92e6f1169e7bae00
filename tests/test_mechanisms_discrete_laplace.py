"""Discrete Laplace label histograms (LabelDP, Algorithm 4): exact eps-DP, noise law, priors."""

import itertools

import numpy as np
import pytest
from scipy.stats import chisquare, dlaplace

from dpnotes.mechanisms import discrete_laplace_histogram, discrete_laplace_log_likelihood, histogram_prior

ALPHA = 1e-4


def output_grid(counts, radius):
    axes = [np.arange(c - radius, c + radius + 1) for c in counts]
    return np.array(list(itertools.product(*axes)))


@pytest.mark.parametrize("eps", [0.2, 1.0, 3.0])
def test_substitution_neighbours_likelihood_ratio_at_most_e_eps(eps):
    """Moving one label between bins: log-ratio <= eps for every output on a grid, and eps is attained."""
    h = np.array([4, 0, 7])
    outputs = output_grid(h, 6)
    worst = 0.0
    for i, j in itertools.permutations(range(3), 2):
        if h[i] == 0:
            continue
        h2 = h.copy()
        h2[i] -= 1
        h2[j] += 1
        diff = discrete_laplace_log_likelihood(outputs, h, eps) - discrete_laplace_log_likelihood(outputs, h2, eps)
        worst = max(worst, np.abs(diff).max())
    assert worst <= eps + 1e-9
    assert worst == pytest.approx(eps)  # the bound is tight: the noise is not larger than needed


def test_add_remove_neighbours():
    h, eps = np.array([2, 3]), 0.8
    outputs = output_grid(h, 5)
    h2 = h + np.array([1, 0])
    diff = discrete_laplace_log_likelihood(outputs, h, eps, neighbouring="add_remove") - \
        discrete_laplace_log_likelihood(outputs, h2, eps, neighbouring="add_remove")
    assert np.abs(diff).max() == pytest.approx(eps)
    # Substitution noise is twice as wide: the same add/remove pair costs only eps / 2.
    diff_sub = discrete_laplace_log_likelihood(outputs, h, eps) - discrete_laplace_log_likelihood(outputs, h2, eps)
    assert np.abs(diff_sub).max() == pytest.approx(eps / 2)


@pytest.mark.statistical
def test_noise_matches_the_exact_pmf():
    """Chi-square over noise values -4..4 plus two tail bins; false-alarm rate 1e-4."""
    eps = 1.0
    counts = np.full((20_000, 3), 10)
    noise = (discrete_laplace_histogram(counts, eps, rng=np.random.default_rng(0)) - counts).ravel()
    values = np.arange(-4, 5)
    pmf = dlaplace.pmf(values, eps / 2)  # substitution: sensitivity 2
    expected = np.concatenate([[dlaplace.cdf(-5, eps / 2)], pmf, [dlaplace.sf(4, eps / 2)]])
    observed = np.concatenate([[(noise < -4).sum()], [(noise == v).sum() for v in values], [(noise > 4).sum()]])
    assert chisquare(observed, expected * noise.size).pvalue > ALPHA


def test_log_likelihood_is_the_product_of_bin_pmfs():
    y, h, eps = np.array([3, -1, 5]), np.array([2, 0, 5]), 1.2
    expected = np.log(np.prod(dlaplace.pmf(y - h, eps / 2)))
    assert discrete_laplace_log_likelihood(y, h, eps) == pytest.approx(expected)


def test_histogram_prior():
    prior = histogram_prior(np.array([[3, -2, 1, 0], [-1, -3, 0, 0]]))
    np.testing.assert_allclose(prior[0], [0.75, 0, 0.25, 0])
    np.testing.assert_allclose(prior[1], [0.25] * 4)  # nothing positive: uniform


def test_same_rng_seed_same_histogram():
    h = np.array([5, 1, 0])
    a = discrete_laplace_histogram(h, 1.0, rng=np.random.default_rng(9))
    b = discrete_laplace_histogram(h, 1.0, rng=np.random.default_rng(9))
    assert np.array_equal(a, b) and a.dtype.kind == "i"


@pytest.mark.parametrize("kwargs, match", [
    (dict(counts=np.array([1, 2]), epsilon=0.0), "epsilon"),
    (dict(counts=np.array([1, 2]), epsilon=-1.0), "epsilon"),
    (dict(counts=np.array([1.0, 2.0]), epsilon=1.0), "integer"),
    (dict(counts=np.array([1]), epsilon=1.0), "K >= 2"),
    (dict(counts=np.array([1, -2]), epsilon=1.0), ">= 0"),
    (dict(counts=np.array([1, 2]), epsilon=1.0, neighbouring="swap"), "neighbouring"),
])
def test_invalid_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        discrete_laplace_histogram(rng=np.random.default_rng(0), **kwargs)


def test_rng_must_be_a_generator():
    with pytest.raises(ValueError, match="rng"):
        discrete_laplace_histogram(np.array([1, 2]), 1.0, rng=0)
    with pytest.raises(ValueError, match="epsilon"):
        discrete_laplace_log_likelihood(np.array([1, 2]), np.array([1, 2]), -1.0)
    with pytest.raises(ValueError, match="noisy_counts"):
        histogram_prior(np.array([0.5, 0.5]))
