"""Privacy mechanisms: Gaussian noise, randomized response, RRTop-k / RRWithPrior, discrete Laplace.

Each sampler takes an explicit random generator; each discrete mechanism also exposes its
exact output distribution so tests (and readers) can check it.
"""

from dpnotes.mechanisms.discrete_laplace import (
    discrete_laplace_histogram,
    discrete_laplace_log_likelihood,
    histogram_prior,
)
from dpnotes.mechanisms.gaussian import gaussian_mechanism
from dpnotes.mechanisms.label_dp_lp import optimal_randomizer
from dpnotes.mechanisms.randomized_response import randomized_response, randomized_response_probabilities
from dpnotes.mechanisms.rr_prior import (
    optimal_k,
    rr_top_k,
    rr_top_k_probabilities,
    rr_with_prior,
    rr_with_prior_probabilities,
)

__all__ = [
    "discrete_laplace_histogram",
    "discrete_laplace_log_likelihood",
    "gaussian_mechanism",
    "histogram_prior",
    "optimal_k",
    "optimal_randomizer",
    "randomized_response",
    "randomized_response_probabilities",
    "rr_top_k",
    "rr_top_k_probabilities",
    "rr_with_prior",
    "rr_with_prior_probabilities",
]
