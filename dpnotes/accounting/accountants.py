"""eps of a DP-SGD run (Poisson-subsampled Gaussian) under the registry's accountants.

:func:`epsilon` prices ``steps`` Poisson-subsampled Gaussian steps with each registered
accountant's :meth:`~dpnotes.accounting.registry.Accountant.price_mechanisms` (the numbers
``price`` gives for ``SelfComposedDpEvent(PoissonSampledDpEvent(q, GaussianDpEvent(sigma)),
steps)``, without building the event: no dp_accounting or scipy import). ``"all"`` means
:data:`ACCOUNTANTS`, four DP-SGD accountants (none of them the slow PRV):

* ``rdp``: RDP with the improved conversion (Balle et al. 2020) and opacus's orders;
* ``rdp-classic``: RDP with the classic conversion (Mironov 2017) and TF Privacy's
  tutorial orders (the "MA eps" of the GDP paper);
* ``clt``: the GDP central limit theorem (Bu et al. 2020), Poisson sampling; an
  approximation that can under-estimate eps;
* ``pld``: the privacy-loss-distribution accountant (:mod:`dpnotes.accounting.pld`),
  pessimistic: a certified upper bound, tight up to its loss grid (``pld_discretization``).

Every other registered accountant that prices the event (:data:`SGM_ACCOUNTANTS`: ``prv``,
the PRV accountant of Gopi et al. 2021 with bounds, seconds per call; ``dpis``,
``sadpsgd-accepted-only``) can be named too.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from dpnotes import validate
from dpnotes.accounting import registry
from dpnotes.accounting.rdp import _check_sgm, resolve_orders
from dpnotes.accounting.registry import ACCOUNTANT_NAMES, PldAccountant, RdpAccountant

ACCOUNTANTS = ("rdp", "rdp-classic", "clt", "pld")  # what "all" means
SGM_ACCOUNTANTS = tuple(name for name in ACCOUNTANT_NAMES if registry.accountant(name).prices_gaussians)
_RDP = {name: registry.accountant(name) for name in SGM_ACCOUNTANTS
        if isinstance(registry.accountant(name), RdpAccountant)}
DEFAULT_ORDERS = {name: acc.orders for name, acc in _RDP.items()}
CONVERSION = {name: acc.conversion for name, acc in _RDP.items()}


def accountant_names(accountant: str) -> tuple[str, ...]:
    """The accountants selected by ``accountant`` (one of :data:`SGM_ACCOUNTANTS`, or ``"all"``)."""
    validate.choice("accountant", accountant, SGM_ACCOUNTANTS + ("all",))
    return ACCOUNTANTS if accountant == "all" else (accountant,)


def epsilon(
    q: float,
    sigma: float,
    steps: float,
    delta: float,
    accountant: str = "all",
    orders: str | Sequence[float] | None = None,
    pld_discretization: float | None = None,
) -> dict[str, dict[str, float]]:
    """eps of ``steps`` Poisson-subsampled Gaussian steps, keyed by accountant name.

    ``{"clt": {"mu", "epsilon"}, "rdp-classic": {"epsilon", "order"},
    "rdp": {"epsilon", "order"}, "pld": {"epsilon"}, "prv": {"epsilon", "lower", "upper"}}``,
    restricted to ``accountant`` unless it is ``"all"``. ``orders`` replaces the RDP order list
    of every RDP accountant (default: :data:`DEFAULT_ORDERS`); ``pld_discretization`` the PLD
    accountant's loss grid (default: the registry's; coarser is faster and looser, still an
    upper bound). ``steps`` may be
    fractional (``epochs * n / B``); the PRV and PLD accountants round it up.
    """
    names = accountant_names(accountant)
    q, sigma, steps = _check_sgm(q, sigma, steps)
    delta = validate.probability("delta", delta, high_open=True)
    if orders is not None:
        orders = tuple(resolve_orders(orders))
    if pld_discretization is not None:
        pld_discretization = validate.positive("pld_discretization", pld_discretization)
    out: dict[str, dict[str, float]] = {}
    for name in names:
        acc = registry.accountant(name)
        if orders is not None and isinstance(acc, RdpAccountant):
            acc = dataclasses.replace(acc, orders=orders)
        if pld_discretization is not None and isinstance(acc, PldAccountant):
            acc = dataclasses.replace(acc, discretization=pld_discretization)
        out[name] = acc.price_mechanisms([(q, sigma, steps)], delta)
    return out
