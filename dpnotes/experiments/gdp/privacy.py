"""GDP's mechanisms as the paper accounts them, exact (no training): the moments accountant's and the
CLT's eps of each Table 1-4 row and Figure 4's sigma (:func:`mechanism`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from dpnotes import validate
from dpnotes.accounting.calibrate import noise_multiplier
from dpnotes.accounting.gdp import mu_poisson
from dpnotes.accounting.prv import prv_epsilon
from dpnotes.accounting.rdp import rdp_to_epsilon, resolve_orders, subsampled_gaussian_rdp
from dpnotes.accounting.registry import price
from dpnotes.ledger import GaussianDpEvent, Ledger, PoissonSampledDpEvent

from .settings import DELTA, MA_ACCOUNTANT, MA_ORDERS, _s


# The mechanisms as the paper accounts them.
@dataclass(frozen=True)
class Mechanism:
    """T Poisson-subsampled Gaussian steps: rate q, noise multiplier sigma, delta; priced as a
    one-entry ledger by the accountant registry (the same accountants that price run records)."""

    q: float
    sigma: float
    steps: float
    delta: float

    @property
    def ledger(self) -> Ledger:
        """The paper's T (fractional: epochs * n / B) steps as a ledger."""
        return Ledger().append(PoissonSampledDpEvent(self.q, GaussianDpEvent(self.sigma)), self.steps)

    @property
    def mu(self) -> float:
        """mu of the privacy CLT (Bu et al., Eq. 5)."""
        return price(self.ledger, self.delta, "clt")["clt"]["mu"]

    @property
    def eps_clt(self) -> float:
        """eps(delta; mu) of mu-GDP (Eq. 6)."""
        return price(self.ledger, self.delta, "clt")["clt"]["epsilon"]

    @property
    def eps_ma(self) -> float:
        """The moments accountant's eps (TF Privacy before 2020: tutorial orders, classic)."""
        return price(self.ledger, self.delta, MA_ACCOUNTANT)[MA_ACCOUNTANT]["epsilon"]

    def eps_prv(self) -> tuple[float, float, float]:
        """A tight accountant's (estimate, lower, upper) eps (PRV, Gopi et al. 2021), to within
        0.5% of the MA eps or 0.01, whichever is larger (finer is slow at large eps)."""
        return _prv(self.q, self.sigma, self.steps, self.delta, max(0.01, self.eps_ma / 200))


@lru_cache(maxsize=None)
def _prv(q, sigma, steps, delta, eps_error) -> tuple[float, float, float]:
    return tuple(prv_epsilon(q, sigma, steps, delta, eps_error=eps_error))


@lru_cache(maxsize=None)
def rdp_per_step(q: float, sigma: float) -> np.ndarray:
    """RDP of one step at the MA orders (cached: RDP composes linearly in the steps)."""
    return subsampled_gaussian_rdp(q, sigma, 1, resolve_orders(MA_ORDERS))


def ma_epsilons(q: float, sigma: float, steps, delta: float) -> list[float]:
    """Moments-accountant eps after each entry of ``steps`` (RDP is linear in T): the
    ``rdp-classic`` accountant's computation, vectorised over T for the figures' curves."""
    orders = resolve_orders(MA_ORDERS)
    return [rdp_to_epsilon(t * rdp_per_step(q, sigma), orders, delta, "classic")[0] for t in steps]


def _mnist(sigma: float, epochs: float) -> Mechanism:
    b, n = _s("mnist.batch_size"), _s("mnist.train_size")
    return Mechanism(b / n, sigma, epochs * n / b, DELTA["mnist"])


def table1_row(i: int) -> dict:
    """Settings of Table 1, row ``i`` (1-6): eta, clip R, sigma, epochs."""
    validate.integer("i", i, minimum=1)
    if i > 6:
        raise ValueError(f"i must be in 1..6 (Table 1 has six rows), got {i}")
    return {k: _s(f"table1.row{i}.{k}") for k in ("eta", "clip", "sigma", "epochs")}


@lru_cache(maxsize=None)
def adult_epochs() -> int:
    """Our choice for Table 2, whose epochs are lost in the extracted text: the most epochs
    that keep mu_CLT <= 2, the budget the paper states for Tables 2-4."""
    q = _s("table2.batch_size") / _s("table2.train_size")
    per_epoch = _s("table2.train_size") / _s("table2.batch_size")
    epochs = 1
    while mu_poisson(q, _s("table2.sigma"), (epochs + 1) * per_epoch) <= _s("table2.mu_budget"):
        epochs += 1
    return epochs


SIGMA_DIGITS = 4  # a calibrated sigma in a run config: the smallest 4-digit one meeting the budget


@lru_cache(maxsize=None)
def figure4_sigma_clt(part: str, digits: int | None = SIGMA_DIGITS) -> float:
    """sigma~ of Figure 4 (``part`` "top" or "bottom"): the noise at which the CLT gives the
    moments accountant's eps of sigma_MA at the same epoch (Eqs. 7-8), by calibration. The
    runs use the smallest sigma of ``digits`` significant digits whose CLT eps is at most it;
    ``digits=None``: the root itself (to 1e-6), the number the paper prints."""
    ma = mechanism(f"figure4.{validate.choice('part', part, ('top', 'bottom'))}.ma")
    return noise_multiplier(ma.eps_ma, ma.q, ma.steps, ma.delta, accountant="clt", digits=digits)


def mechanism(name: str) -> Mechanism:
    """How the paper accounts the run ``name`` (an experiment name such as ``table1.row2``)."""
    if name.startswith("table1.row"):
        row = table1_row(int(name.removeprefix("table1.row")))
        return _mnist(row["sigma"], row["epochs"])
    if name == "table2.private":
        b, n = _s("table2.batch_size"), _s("table2.train_size")
        return Mechanism(b / n, _s("table2.sigma"), adult_epochs() * n / b, DELTA["adult"])
    if name == "table3.private":
        b, n = _s("table3.batch_size"), _s("table3.train_size")
        return Mechanism(b / n, _s("table3.sigma"), _s("table3.private.epochs") * n / b, DELTA["imdb"])
    if name == "table4.private":
        k = _s("table4.sample_rate_inverse")
        return Mechanism(1 / k, _s("table4.sigma"), _s("table4.epochs") * k, DELTA["movielens"])
    if name in ("figure4.top.ma", "figure4.bottom.ma"):
        part = name.split(".")[1]
        return _mnist(_s(f"figure4.{part}.sigma_ma"), _s(f"figure4.{part}.epochs"))
    if name in ("figure4.top.clt", "figure4.bottom.clt"):
        part = name.split(".")[1]
        return _mnist(figure4_sigma_clt(part), _s(f"figure4.{part}.epochs"))
    raise ValueError(f"no accounted mechanism named {name!r}")
