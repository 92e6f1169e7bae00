"""Privacy accountants for DP-SGD-style training (Poisson-subsampled Gaussian).

``epsilon(q, sigma, steps, delta, accountant="all")`` answers "what is eps for my run?"
under every accountant; ``noise_multiplier`` and ``max_steps`` calibrate a budget.
Every accountant lives in :mod:`dpnotes.accounting.registry`, whose ``price`` prices a
privacy ledger (:mod:`dpnotes.ledger`) of any mix of releases.
"""

import importlib

# Re-exports, imported on first use (PEP 562): ``dpnotes epsilon`` needs only accountants, rdp,
# gdp and pld (numpy and math), not calibrate or prv or tradeoff (scipy, dp_accounting).
_EXPORTS = {
    "accountants": ("ACCOUNTANTS", "DEFAULT_ORDERS", "SGM_ACCOUNTANTS", "epsilon"),
    "calibrate": ("max_steps", "noise_multiplier"),
    "gdp": ("delta_from_mu", "epsilon_from_mu", "mu_from_epsilon", "mu_poisson", "mu_uniform"),
    "prv": ("PRVEpsilon", "prv_compose", "prv_epsilon"),
    "rdp": ("ORDERS", "integer_steps", "rdp_epsilon", "rdp_to_epsilon", "resolve_orders", "subsampled_gaussian_rdp"),
    "registry": ("ACCOUNTANT_NAMES", "UnsupportedEventError", "accountant", "price"),
    "tradeoff": ("composed_subsampled_gaussian_tradeoff", "envelope_tradeoff", "epsdelta_tradeoff",
                 "gaussian_tradeoff", "min_error_sum"),
}
_MODULE = {name: module for module, names in _EXPORTS.items() for name in names}
__all__ = sorted(_MODULE)


def __getattr__(name: str):
    if name not in _MODULE:
        raise AttributeError(f"module 'dpnotes.accounting' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"dpnotes.accounting.{_MODULE[name]}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
