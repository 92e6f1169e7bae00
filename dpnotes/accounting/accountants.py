"""One entry point to every accountant of the Poisson-subsampled Gaussian (DP-SGD).

* ``rdp``: RDP with the improved conversion (Balle et al. 2020) and opacus's orders;
* ``rdp-classic``: RDP with the classic conversion (Mironov 2017) and TF Privacy's
  tutorial orders (the "MA eps" of the GDP paper);
* ``clt``: the GDP central limit theorem (Bu et al. 2020), Poisson sampling; an
  approximation that can under-estimate eps;
* ``prv``: the tight numerical PRV accountant (Gopi et al. 2021), with bounds; slow
  (0.05-15 s per call).
"""

from __future__ import annotations

from collections.abc import Sequence

from dpnotes import validate
from dpnotes.accounting.gdp import epsilon_from_mu, mu_poisson
from dpnotes.accounting.prv import prv_epsilon
from dpnotes.accounting.rdp import _check_sgm, rdp_epsilon, resolve_orders

ACCOUNTANTS = ("rdp", "rdp-classic", "clt", "prv")
DEFAULT_ORDERS = {"rdp": "opacus", "rdp-classic": "tf-tutorial"}
CONVERSION = {"rdp": "improved", "rdp-classic": "classic"}


def accountant_names(accountant: str) -> tuple[str, ...]:
    """The accountants selected by ``accountant`` (one name, or ``"all"``)."""
    validate.choice("accountant", accountant, ACCOUNTANTS + ("all",))
    return ACCOUNTANTS if accountant == "all" else (accountant,)


def epsilon(
    q: float,
    sigma: float,
    steps: float,
    delta: float,
    accountant: str = "all",
    orders: str | Sequence[float] | None = None,
) -> dict[str, dict[str, float]]:
    """eps of ``steps`` Poisson-subsampled Gaussian steps, keyed by accountant name.

    ``{"clt": {"mu", "epsilon"}, "rdp-classic": {"epsilon", "order"},
    "rdp": {"epsilon", "order"}, "prv": {"epsilon", "lower", "upper"}}``, restricted to
    ``accountant`` unless it is ``"all"``. ``orders`` replaces the RDP order list of both
    RDP accountants (default: :data:`DEFAULT_ORDERS`). ``steps`` may be fractional
    (``epochs * n / B``); the PRV accountant rounds it up.
    """
    names = accountant_names(accountant)
    q, sigma, steps = _check_sgm(q, sigma, steps)
    delta = validate.probability("delta", delta, high_open=True)
    if orders is not None:
        orders = resolve_orders(orders)
    out: dict[str, dict[str, float]] = {}
    for name in names:
        if name in CONVERSION:
            eps, order = rdp_epsilon(
                q, sigma, steps, delta,
                orders=DEFAULT_ORDERS[name] if orders is None else orders,
                conversion=CONVERSION[name],
            )
            out[name] = {"epsilon": eps, "order": order}
        elif name == "clt":
            mu = mu_poisson(q, sigma, steps)
            out[name] = {"mu": mu, "epsilon": epsilon_from_mu(mu, delta)}
        else:
            out[name] = prv_epsilon(q, sigma, steps, delta)._asdict()
    return out
