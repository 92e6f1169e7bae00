"""SA-DPSGD's mechanism and its two accountings, exact (no training): the ledger of the candidates, eps as
the paper prices it (accepted steps only) and the sound price (every candidate), tau at a budget, and Table 3's
break-even rates.
"""

from __future__ import annotations

from functools import lru_cache

from dpnotes import calc_cache, claims, validate
from dpnotes.accounting.registry import price
from dpnotes.ledger import CandidateStepDpEvent, GaussianDpEvent, Ledger, PoissonSampledDpEvent

from .settings import _SIZE_KEY, ACCEPTED_ONLY, PAPER, SOUND, _dataset, _s


# The paper's mechanism and its two accountings.
def setting(ds: str) -> dict:
    """Table 2's settings of dataset ``ds`` (``mnist``, ``fmnist``, ``cifar10``) and N (Sec. 4.1)."""
    ds = _dataset(ds)
    out = {k: _s(f"table2.{ds}.{k}") for k in ("lr", "batch_size", "clip", "sigma", "epsilon",
                                                  "delta", "q0", "mu0")}
    out["n_train"] = _s(f"data.{_SIZE_KEY[ds]}.n_train")
    out["q"] = out["batch_size"] / out["n_train"]
    return out


def step_event(ds: str) -> PoissonSampledDpEvent:
    """One candidate's release: the Poisson-subsampled Gaussian at Table 2's q and sigma."""
    s = setting(ds)
    return PoissonSampledDpEvent(s["q"], GaussianDpEvent(s["sigma"]))


def candidate_ledger(ds: str, accepted: float, rejected: float = 0) -> Ledger:
    """A run's ledger: ``accepted`` accepted then ``rejected`` rejected candidate steps
    (order does not change any eps: every accountant here composes additively)."""
    ledger, event = Ledger(), step_event(ds)
    if accepted:
        ledger.append(CandidateStepDpEvent(event, True), accepted)
    if rejected:
        ledger.append(CandidateStepDpEvent(event, False), rejected)
    return ledger


def released(ledger: Ledger) -> Ledger:
    """The same ledger with every candidate as the release it is, accepted or not."""
    out = Ledger()
    for event, count in ledger.entries:
        out.append(event.event if isinstance(event, CandidateStepDpEvent) else event, count)
    return out


def _accepted_only(ds: str, ledger: Ledger) -> float:
    return price(ledger, setting(ds)["delta"], ACCEPTED_ONLY)[ACCEPTED_ONLY]["epsilon"]


def eps_paper(ds: str, accepted: float, rejected: float = 0) -> float:
    """Theorem 1's eps: the accepted steps only (``rejected`` changes nothing). A pure value:
    within ``dpnotes scoreboard``, from :mod:`dpnotes.calc_cache`."""
    return calc_cache.cached("sadpsgd.eps_paper", (ds, accepted, rejected),
                             lambda: _accepted_only(ds, candidate_ledger(ds, accepted, rejected)))


def eps_all(ds: str, accepted: float, rejected: float = 0) -> float:
    """Theorem 1's formula (integer orders 2..64, classic conversion) over ALL candidates:
    a sound bound, differing from :func:`eps_paper` only in what it counts (cached as it)."""
    return calc_cache.cached("sadpsgd.eps_all", (ds, accepted, rejected),
                             lambda: _accepted_only(ds, released(candidate_ledger(ds, accepted, rejected))))


def eps_sound(ds: str, accepted: float, rejected: float = 0, accountants=SOUND) -> dict[str, float]:
    """eps of the run under the registry's sound accountants (all candidates priced)."""
    s = setting(ds)
    out = price(candidate_ledger(ds, accepted, rejected), s["delta"], accountants)
    return {name: v["epsilon"] for name, v in out.items()}


@lru_cache(maxsize=None)
def tau_at(ds: str, epsilon: float | None = None) -> int:
    """The most accepted steps whose Theorem 1 eps stays <= ``epsilon`` (Table 2's budget
    if None): where a run stopped by the budget ends."""
    s = setting(ds)
    epsilon = s["epsilon"] if epsilon is None else validate.positive("epsilon", epsilon)
    if eps_paper(ds, 1) > epsilon:
        raise ValueError(f"epsilon={epsilon} is below the eps of one step on {ds}")
    lo, hi = 1, 2
    while eps_paper(ds, hi) <= epsilon:
        lo, hi = hi, 2 * hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if eps_paper(ds, mid) <= epsilon else (lo, mid)
    return lo


def worst_case_candidates(ds: str, tau: int | None = None) -> int:
    """The most candidates a run with ``tau`` accepted steps can make (``tau_at(ds)`` if None):
    at most mu0 rejections precede each accept (the forced accept, Alg. 2 line 13), and the
    run stops right after the accept that exhausts the budget: T_max = (mu0 + 1) tau."""
    tau = tau_at(ds) if tau is None else validate.integer("tau", tau, minimum=1)
    return int((setting(ds)["mu0"] + 1) * tau)


@lru_cache(maxsize=None)
def steps_for(ds: str, epsilon: float) -> float:
    """The (fractional) number of releases whose eps under Theorem 1's formula is ``epsilon``:
    RDP is linear in the count, so eps is continuous and increasing in it (bisection)."""
    epsilon = validate.positive("epsilon", epsilon)
    lo, hi = 1e-6, 1.0
    while eps_all(ds, hi) < epsilon:
        lo, hi = hi, 2 * hi
    for _ in range(80):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if eps_all(ds, mid) < epsilon else (lo, mid)
    return (lo + hi) / 2


def break_even_rate(ds: str, eps_sa: float, eps_baseline: float) -> float:
    """The acceptance rate above which SA-DPSGD, at the accepted-steps eps ``eps_sa``, has a
    lower sound eps (Theorem 1's formula over all tau / rate candidates) than a DP-SGD run at
    ``eps_baseline`` (all its steps accepted): steps(eps_sa) / steps(eps_baseline)."""
    return steps_for(ds, eps_sa) / steps_for(ds, eps_baseline)


def _numeric(claim_id: str) -> float | None:
    return claims.get(claim_id).number


def table3_levels(ds: str) -> list[str]:
    """Table 3's accuracy-level keys of ``ds`` (e.g. ``acc0_94``), from the registry."""
    prefix = f"sadpsgd.table3.{_dataset(ds)}."
    return sorted({c.id[len(prefix):].split(".")[0] for c in claims.load(PAPER) if c.id.startswith(prefix)})


def top_level(ds: str) -> float:
    """Table 3's highest accuracy level of ``ds`` (a fraction): a Table 3 baseline run stops
    once its test accuracy reaches it (nothing after that point is read)."""
    return max(_s(f"table3.{_dataset(ds)}.{level}.accuracy_level") for level in table3_levels(ds))


def table3_break_even(ds: str, level: str) -> dict:
    """Break-even acceptance rate of one Table 3 row: SA-DPSGD's printed (accepted-steps) eps
    against the lowest printed baseline eps of the row (schemes without a value, '-', skipped)."""
    base = f"sadpsgd.table3.{_dataset(ds)}.{level}"
    baselines = {k: _numeric(f"{base}.eps_{k}") for k in ("d", "h", "a")}
    baselines = {k: v for k, v in baselines.items() if v is not None}
    best = min(baselines, key=baselines.get)
    eps_s = claims.value(f"{base}.eps_s")
    return {"dataset": ds, "level": _s(f"{base[len('sadpsgd.'):]}.accuracy_level"), "eps_s": eps_s,
            "best_baseline": f"eps_{best}", "eps_baseline": baselines[best],
            "break_even_rate": break_even_rate(ds, eps_s, baselines[best])}
