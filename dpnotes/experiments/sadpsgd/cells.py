"""What SA-DPSGD's run records hold: accuracy, acceptance rate, curves, the accept decisions, Table 3's
runs and eps levels, for :func:`~.answers.measure` and the chapter.
"""

from __future__ import annotations

import math

from dpnotes import validate
from dpnotes.record import Record

from .privacy import eps_all, eps_paper
from .runs import configs
from .settings import TABLE3_SCHEME


def _current(records: list[dict], profile: str) -> dict[str, list[dict]]:
    """Records of the current configs of ``profile``, by experiment (stale configs ignored)."""
    from dpnotes.experiments import current

    return current(records, configs(profile))


def accuracy(record: dict) -> float:
    """Final test accuracy of a record, in percent."""
    return Record.of(record).accuracy()


def acceptance_rate(record: dict) -> float:
    r = Record.of(record)
    return r.metric("accepted_steps") / r.metric("steps")


def curve(record: dict) -> list[dict]:
    """The run's test points in order (``eval_every`` points of every epoch)."""
    return [point for epoch in Record.of(record).epochs for point in epoch.get("curve", [])]


def first_reaching(record: dict, ds: str, level: float) -> dict | None:
    """The first test point with accuracy >= ``level`` (a fraction), with its eps under the
    paper's accounting (Theorem 1: accepted steps; a baseline accepts all) and the sound one
    (Theorem 1's formula over every candidate); None if the run never reaches it."""
    for point in curve(record):
        if point["test_acc"] >= level:
            accepted, rejected = point["accepted_steps"], point["step"] - point["accepted_steps"]
            return {**point, "eps_paper": eps_paper(ds, accepted),
                    "eps_sound": eps_all(ds, accepted, rejected)}
    return None


def decisions(record: dict) -> list[dict]:
    """Every candidate of an SA-DPSGD run recorded at every step (``eval_every`` 1), in order:
    ``step``, ``tau`` (accepted steps after it), ``accepted``, ``mu`` (consecutive rejections
    before it), ``delta_e`` (J(w_new) - J(w_t) of an accepted candidate, from the two test
    losses; None for a rejected one, whose J is not recorded, and for the first candidate,
    J(w_0) being unrecorded) and ``kind``: ``downhill`` (Delta E <= 0), ``uphill`` (Delta E > 0,
    accepted by Eq. 3's draw), ``forced`` (Delta E > 0 after mu0 rejections: Alg. 2 line 13),
    ``rejected`` or ``first`` (accepted, Delta E unknown)."""
    points = curve(record)
    if [p["step"] for p in points] != list(range(1, len(points) + 1)):
        raise ValueError(f"record {record.get('id')}: decisions need a test point at every step (eval_every=1)")
    mu0 = Record.of(record).method_config["mu0"]
    out, mu, tau, loss = [], 0, 0, None
    for p in points:
        accepted = p["accepted_steps"] > tau
        delta = p["test_loss"] - loss if accepted and loss is not None else None
        if not accepted:
            kind = "rejected"
        elif loss is None:
            kind = "first"
        elif delta <= 0:
            kind = "downhill"
        else:
            kind = "forced" if mu0 is not None and mu >= mu0 else "uphill"
        out.append({"step": p["step"], "tau": p["accepted_steps"], "accepted": accepted, "mu": mu,
                    "delta_e": delta, "kind": kind})
        mu = 0 if accepted else mu + 1
        tau, loss = p["accepted_steps"], p["test_loss"]
    return out


def last_uphill(record: dict) -> int | None:
    """tau when the last uphill candidate that Eq. 3's draw accepted (not forced) was judged,
    i.e. with Q = Q0 tau: after it the rule behaved greedily, accepting a worse model only when
    forced; None if there was none."""
    ups = [d["tau"] - 1 for d in decisions(record) if d["kind"] == "uphill"]
    return ups[-1] if ups else None


def table3_run(ds: str, key: str) -> str:
    scheme = TABLE3_SCHEME[key]
    return f"table1.{ds}.{scheme}" if scheme == "sa_dpsgd" else f"table3.{ds}.{scheme}"


def mean_or_never(values) -> float:
    """Mean over seeds; a seed that never reached the level (None) makes it inf."""
    return math.inf if any(v is None for v in values) else sum(values) / len(values)


def level_eps(runs: list[dict], ds: str, level: float, accounting: str = "eps_paper") -> float | None:
    """Mean eps over ``runs`` (``eps_paper`` or ``eps_sound``, :func:`first_reaching`) at which
    test accuracy first reaches ``level``; inf if a run never did; None without runs."""
    validate.choice("accounting", accounting, ("eps_paper", "eps_sound"))
    hits = [first_reaching(r, ds, level) for r in runs if curve(r)]
    return mean_or_never([h and h[accounting] for h in hits]) if hits else None
