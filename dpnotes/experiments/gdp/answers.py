"""Our value for each GDP claim (:func:`measure`): the exact claims, the statements and the training
claims (Tables 1-4, Figure 4), from the records.
"""

from __future__ import annotations

import math

import numpy as np

from dpnotes import claims
from dpnotes.accounting.gdp import epsilon_from_mu, mu_poisson
from dpnotes.experiments import measurement
from dpnotes.experiments.measurement import Measurement
from dpnotes.record import Record

from .cells import (
    FIGURE4_EPOCHS_TO,
    _acc_at_eps,
    _final_acc_text,
    _first_epoch,
    _reached,
    accuracy,
    appendix_a_curves,
    current_runs,
    figure2_curves,
    figure4_target,
    min_errors,
)
from .privacy import figure4_sigma_clt, ma_epsilons, mechanism
from .runs import TABLE_MODELS
from .settings import _s


def _exact_claims() -> list[Measurement]:
    out = []
    for name in TABLE_MODELS:
        m = mechanism(name)
        for field, value in (("mu", m.mu), ("eps_clt", m.eps_clt), ("eps_ma", m.eps_ma)):
            out.append(measurement.exact(f"gdp.{name}.{field}", value))
    for part in ("top", "bottom"):
        out.append(measurement.exact(f"gdp.figure4.{part}.eps", mechanism(f"figure4.{part}.ma").eps_ma))
        out.append(measurement.exact(f"gdp.figure4.{part}.mu", mechanism(f"figure4.{part}.clt").mu))
        out.append(measurement.exact(f"gdp.figure4.{part}.sigma_clt", figure4_sigma_clt(part, digits=None)))
    for acc, value in min_errors(mechanism("table1.row2")).items():
        out.append(measurement.exact(f"gdp.figure3.row2.min_error_{acc}", 100 * value))
    # Section 4.1 computes e^eps from the eps printed in Table 1, row 3.
    row3 = mechanism("table1.row3")
    for acc, eps in (("ma", row3.eps_ma), ("clt", row3.eps_clt)):
        printed = round(eps, claims.get(f"gdp.table1.row3.eps_{acc}").decimals)
        out.append(measurement.exact(f"gdp.section4.likelihood_ratio_{acc}", math.exp(printed),
                                     f"exp({printed}) from our Table 1 row 3"))
    return out


def _statement_claims() -> list[Measurement]:
    curves = figure2_curves()
    worst = max(float((clt - ma).max()) for clt, ma in curves.values())
    out = [measurement.statement(
        "gdp.figure2.clt_below_ma", worst < 0, f"max eps_CLT - eps_MA = {worst:.3f}",
        "eps_CLT < eps_MA at every Table 1 sigma, epochs 1-9 and 10-100 in steps of 5")]
    a = appendix_a_curves()
    gap = float(np.abs(a["numeric"] - a["clt"]).max())
    out.append(measurement.statement("gdp.appendixA.clt_close", gap <= 0.03,
                                     f"max |f - G_mu| = {gap:.4f}", "largest vertical gap <= 0.03"))
    ma, clt = mechanism("figure4.top.ma"), mechanism("figure4.top.clt")
    budget_epoch = _s("figure4.top.epochs")
    steps = np.arange(1, int(budget_epoch)) * ma.steps / budget_epoch  # after epochs 1..19
    eps_ma = ma_epsilons(ma.q, ma.sigma, steps, ma.delta)
    eps_clt = [epsilon_from_mu(mu_poisson(clt.q, clt.sigma, t), clt.delta) for t in steps]
    margin = float(min(np.array(eps_ma) - np.array(eps_clt)))
    out.append(measurement.statement("gdp.figure4.top.clt_less_eps_before_20", margin > 0,
                                     f"min eps_MA - eps_CLT = {margin:.3f}",
                                     "eps_CLT(sigma~) < eps_MA(sigma) at every epoch before the 20th"))
    return out


def _scaled_down(claim_id: str, quick: list[dict], describe) -> Measurement:
    """A training claim without a paper-profile record; quick runs are described, never compared."""
    if not quick:
        return measurement.missing(claim_id, "no run record")
    return measurement.missing(claim_id, "paper-profile run missing",
                               f"scaled-down quick run: {describe(quick)} (not comparable)")


def _training_claim(claim_id: str, paper: list[dict], quick: list[dict], value, describe,
                    why_none: str | None = None) -> Measurement:
    """``value(record)`` of each paper-profile record; ``None`` where a run never produced one,
    and then ``why_none`` (formatted with their number ``n``) says why. Without paper-profile
    records: the scaled-down ``quick`` ones, described by ``describe``."""
    if not paper:
        return _scaled_down(claim_id, quick, describe)
    values = [value(r) for r in paper]
    n = values.count(None)
    return measurement.training(claim_id, values, [Record.of(r).id for r in paper],
                                why_none.format(n=n) if n and why_none else None)


def _figure4_claims(paper: dict, quick: dict) -> list[Measurement]:
    out = []
    budget = _s("figure4.bottom.acc_at_eps4.budget")
    for acc in ("ma", "clt"):
        runs, qruns = paper.get(f"figure4.bottom.{acc}", []), quick.get(f"figure4.bottom.{acc}", [])
        for name in FIGURE4_EPOCHS_TO:
            target = figure4_target(name)
            out.append(_training_claim(
                f"gdp.figure4.bottom.{acc}.{name}", runs, qruns,
                lambda r, t=target: _first_epoch(r, t),
                lambda rs: f"best {max(accuracy(r, e) for r in rs for e in Record.of(r).epochs):.1f}% in "
                           f"{Record.of(rs[0]).train['epochs']} short epoch(s)",
                f"{{n}} run(s) never reached {target:g}%"))
        out.append(_training_claim(f"gdp.figure4.bottom.{acc}.acc_at_eps4", runs, qruns,
                                   lambda r, a=acc: _acc_at_eps(r, a, budget),
                                   lambda rs: f"{accuracy(rs[0]):.1f}% at the end",
                                   f"eps exceeds {budget:g} after the first epoch"))
    out.append(_compare_runs("gdp.figure4.bottom.clt_faster", paper, "bottom", _faster, 1.0,
                             "per seed: min over 95/96/97% of (MA epochs - CLT epochs) > 0"))
    out.append(_compare_runs("gdp.figure4.top.clt_more_accurate", paper, "top", _more_accurate, 0.0,
                             "per seed: mean over epochs of (CLT accuracy - MA accuracy) > 0"))
    return out


def _faster(ma: dict, clt: dict) -> tuple[list[float], str]:
    """Per seed: the smallest, over the targets, of MA's minus CLT's epochs to the target."""
    per_seed, text = [], []
    for seed in sorted(ma):
        gaps = [(_reached(clt[seed], figure4_target(n)), _reached(ma[seed], figure4_target(n)))
                for n in FIGURE4_EPOCHS_TO]
        per_seed.append(min(m - c for c, m in gaps))
        text.append(f"seed {seed}: " + ", ".join(f"{figure4_target(n):g}%: {c:g} vs {m:g}"
                                                  for n, (c, m) in zip(FIGURE4_EPOCHS_TO, gaps)))
    return per_seed, "epochs CLT vs MA, " + "; ".join(text)


def _more_accurate(ma: dict, clt: dict) -> tuple[list[float], str]:
    """Per seed: the mean over epochs of CLT's minus MA's test accuracy (points)."""
    per_seed, text = [], []
    for seed in sorted(ma):
        gap = np.array([accuracy(clt[seed], e) for e in Record.of(clt[seed]).epochs]) - np.array(
            [accuracy(ma[seed], e) for e in Record.of(ma[seed]).epochs])
        per_seed.append(float(gap.mean()))
        text.append(f"seed {seed}: {gap.mean():+.2f} points, ahead at {100 * (gap > 0).mean():.0f}% of epochs")
    return per_seed, "CLT minus MA accuracy, " + "; ".join(text)


def _compare_runs(claim_id: str, paper: dict, part: str, compare, floor: float, rule: str) -> Measurement:
    """A trend between the MA and CLT runs of ``part``, paired by seed (seeds with both runs)."""
    ma = {Record.of(r).seed: r for r in paper.get(f"figure4.{part}.ma", [])}
    clt = {Record.of(r).seed: r for r in paper.get(f"figure4.{part}.clt", [])}
    seeds = sorted(set(ma) & set(clt))
    if not seeds:
        return measurement.missing(claim_id, "paper-profile runs missing")
    per_seed, text = compare({s: ma[s] for s in seeds}, {s: clt[s] for s in seeds})
    return measurement.trend(claim_id, per_seed, floor, text, rule,
                             [Record.of(r).id for s in seeds for r in (ma[s], clt[s])])


def measure(records: list[dict]) -> list[Measurement]:
    """Our value for every GDP claim we answer (verdicts: :mod:`dpnotes.report.verdicts`): the
    accounting claims computed directly, training claims from paper-profile records of the
    current configs only; the accounting claims from :mod:`dpnotes.calc_cache` within its scope."""
    from dpnotes import calc_cache

    paper, quick = current_runs(records, "paper"), current_runs(records, "quick")
    out = calc_cache.cached("gdp.computed_claims", (), lambda: _exact_claims() + _statement_claims())
    trained = [f"table1.row{i}" for i in range(1, 7)] + ["table2.private", "table3.private",
                                                         "table3.nonprivate", "table3.lstm"]
    for name in trained:
        out.append(_training_claim(f"gdp.{name}.accuracy", paper.get(name, []),
                                   quick.get(name, []), accuracy, _final_acc_text))
    return out + _figure4_claims(paper, quick)
