"""What GDP's run records hold and the exact curves: the current runs, the minimum error sums, Figure 2's
and Appendix A's trade-off curves, accuracy at an epoch or an eps and Figure 4's targets, for
:func:`~.answers.measure` and the chapter.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from dpnotes import validate
from dpnotes.accounting.gdp import epsilon_from_mu, mu_poisson
from dpnotes.accounting.tradeoff import (
    composed_subsampled_gaussian_tradeoff,
    epsdelta_tradeoff,
    gaussian_tradeoff,
    min_error_sum,
)
from dpnotes.record import Record

from .privacy import Mechanism, _mnist, ma_epsilons, mechanism, table1_row
from .runs import configs
from .settings import ALPHA, ALPHA_FINE, _s


def current_runs(records: list[dict], profile: str) -> dict[str, list[dict]]:
    """Records of the current configs of ``profile``, by experiment (stale configs ignored)."""
    from dpnotes.experiments import current

    return current(records, configs(profile))


def min_errors(m: Mechanism, mu: float | None = None) -> dict[str, float]:
    """Smallest sum of type I and II errors (Section 4.1, Figure 3) under mu-GDP ("clt"; the
    mechanism's mu unless ``mu`` is given) and under the MA's (eps, delta) ("ma")."""
    a = ALPHA_FINE
    return {"clt": min_error_sum(a, gaussian_tradeoff(m.mu if mu is None else mu, a)),
            "ma": min_error_sum(a, epsdelta_tradeoff(m.eps_ma, m.delta, a))}


FIGURE2_EPOCHS = np.r_[1:10, 10:101:5]


@lru_cache(maxsize=None)
def figure2_curves() -> dict[float, tuple[np.ndarray, np.ndarray]]:
    """eps_CLT and eps_MA after each of ``FIGURE2_EPOCHS`` at every Table 1 noise level."""
    out = {}
    for sigma in sorted({table1_row(i)["sigma"] for i in range(1, 7)}):
        m = _mnist(sigma, 1)
        steps = FIGURE2_EPOCHS * m.steps
        clt = np.array([epsilon_from_mu(mu_poisson(m.q, sigma, t), m.delta) for t in steps])
        out[sigma] = clt, np.array(ma_epsilons(m.q, sigma, steps, m.delta))
    return out


@lru_cache(maxsize=1)
def appendix_a_curves() -> dict[str, np.ndarray]:
    """Appendix A: (p G_{1/sigma} + (1-p) Id)^{(x)T} composed numerically at T = 234 with p
    enlarged so that p sqrt(T) (hence mu) equals Table 1 row 2's, against G_mu; and, beyond
    the paper, the same composition at the real T of row 2 (14,063 steps)."""
    row2 = mechanism("table1.row2")
    t = _s("appendixA.steps")
    p = row2.q * math.sqrt(row2.steps / t)
    return {"alpha": ALPHA, "clt": gaussian_tradeoff(row2.mu, ALPHA),
            "numeric": composed_subsampled_gaussian_tradeoff(p, row2.sigma, t, ALPHA),
            "numeric_full": composed_subsampled_gaussian_tradeoff(row2.q, row2.sigma, row2.steps, ALPHA)}


def accuracy(record: dict, epoch: dict | None = None) -> float:
    """Test accuracy in percent of a run record, at its end or at one of its ``epoch`` entries."""
    return Record.of(record).accuracy(epoch)


def _first_epoch(record: dict, threshold: float) -> float | None:
    return next((e["epoch"] for e in Record.of(record).epochs if accuracy(record, e) >= threshold), None)


EPS_KEY = {"ma": "rdp-classic", "clt": "clt"}  # the accountant each Figure 4 run is read with


def _acc_at_eps(record: dict, acc: str, budget: float) -> float | None:
    return Record.of(record).accuracy_at_eps(budget, EPS_KEY[acc])


FIGURE4_EPOCHS_TO = ("epochs_to_95", "epochs_to_96", "epochs_to_97")  # claim-id suffixes


def figure4_target(name: str) -> float:
    """The test accuracy (%) the claims ``gdp.figure4.bottom.{ma,clt}.<name>`` count epochs to."""
    return _s(f"figure4.bottom.{validate.choice('name', name, FIGURE4_EPOCHS_TO)}.target")


def _reached(record: dict, target: float) -> float:
    """Epoch at which ``record`` first reaches ``target``%; one past its end if never (censored)."""
    first = _first_epoch(record, target)
    return Record.of(record).last_epoch["epoch"] + 1 if first is None else first


def _final_acc_text(rs: list[dict]) -> str:
    return f"{np.mean([accuracy(r) for r in rs]):.1f}% after {Record.of(rs[0]).metric('steps')} steps"
