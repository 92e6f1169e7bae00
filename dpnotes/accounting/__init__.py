"""Privacy accountants for DP-SGD-style training (Poisson-subsampled Gaussian).

``epsilon(q, sigma, steps, delta, accountant="all")`` answers "what is eps for my run?"
under every accountant; ``noise_multiplier`` and ``max_steps`` calibrate a budget.
Every accountant lives in :mod:`dpnotes.accounting.registry`, whose ``price`` prices a
privacy ledger (:mod:`dpnotes.ledger`) of any mix of releases.
"""

from dpnotes.accounting.accountants import ACCOUNTANTS, DEFAULT_ORDERS, SGM_ACCOUNTANTS, epsilon
from dpnotes.accounting.calibrate import max_steps, noise_multiplier
from dpnotes.accounting.gdp import (
    delta_from_mu,
    epsilon_from_mu,
    mu_from_epsilon,
    mu_poisson,
    mu_uniform,
)
from dpnotes.accounting.prv import PRVEpsilon, prv_compose, prv_epsilon
from dpnotes.accounting.rdp import (
    ORDERS,
    rdp_epsilon,
    rdp_to_epsilon,
    resolve_orders,
    subsampled_gaussian_rdp,
)
from dpnotes.accounting.registry import ACCOUNTANT_NAMES, UnsupportedEventError, accountant, price
from dpnotes.accounting.tradeoff import (
    composed_subsampled_gaussian_tradeoff,
    envelope_tradeoff,
    epsdelta_tradeoff,
    gaussian_tradeoff,
    integer_steps,
    min_error_sum,
)

__all__ = [
    "ACCOUNTANTS", "ACCOUNTANT_NAMES", "DEFAULT_ORDERS", "ORDERS", "PRVEpsilon", "SGM_ACCOUNTANTS",
    "UnsupportedEventError", "accountant", "price", "prv_compose",
    "composed_subsampled_gaussian_tradeoff", "delta_from_mu", "envelope_tradeoff",
    "epsdelta_tradeoff", "epsilon", "epsilon_from_mu", "gaussian_tradeoff", "integer_steps",
    "max_steps", "min_error_sum", "mu_from_epsilon", "mu_poisson", "mu_uniform",
    "noise_multiplier", "prv_epsilon", "rdp_epsilon", "rdp_to_epsilon", "resolve_orders",
    "subsampled_gaussian_rdp",
]
