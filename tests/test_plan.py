"""The seeds plan (:mod:`dpnotes.experiments.plan`): committed data that the paper profiles follow
exactly, never more seeds than it plans, and a power calculation that holds in simulation."""

import os

import numpy as np
import pytest

from dpnotes import runner
from dpnotes.experiments import plan
from dpnotes.report import power


def test_the_committed_plan_loads_and_names_real_experiments():
    p = plan.load()
    assert p.fixed and p.rows
    for paper in {r.claim.split(".", 1)[0] for r in p.rows}:
        known = {s.experiment for s in runner.specs(paper, "paper")}
        for row in (r for r in p.rows if r.claim.startswith(paper + ".")):
            assert set(row.experiments) <= known, row.claim
            assert row.planned >= row.now and (row.needed is None) == (row.where == "none" and row.needed is None)


def _profile_without_plan(paper):
    plan._OVERRIDE.append(plan.Plan("", ()))
    try:
        return runner.specs(paper, "paper")
    finally:
        plan._OVERRIDE.pop()


@pytest.mark.parametrize("paper", ["dplis", "dpis", "gdp", "labeldp", "sadpsgd"])
def test_a_profile_lists_exactly_the_planned_seeds(paper):
    """Every experiment's seeds are its profile's own plus 0 .. n-1 for the n the plan gives it:
    a profile that lists more seeds than the plan (or fewer) fails here."""
    base: dict[str, set] = {}
    for s in _profile_without_plan(paper):
        base.setdefault(s.experiment, set()).add(s.seed)
    now: dict[str, set] = {}
    for s in runner.specs(paper, "paper"):
        now.setdefault(s.experiment, set()).add(s.seed)
    assert set(now) == set(base)
    for experiment, seeds in now.items():
        n = plan.load().seeds(paper, experiment)
        assert seeds == base[experiment] | set(range(n or 0)), experiment


def test_extend_copies_the_latest_seed_and_sets_every_seed_field():
    configs = [{"experiment": "e", "seed": s, "train": {"seed": s, "grad_backend": "func" if s == 0 else "ghost"}}
               for s in (0, 1, 2)]
    fake = plan.Plan("2026-01-01", (plan.PlanRow("dplis.t.c", ("e",), "central", None, 1.0, False, 3, 5, 5,
                                                 1.0, 0.1, "cpu", (1.0, 0.5)),))
    plan._OVERRIDE.append(fake)
    try:
        out = plan.extend("dplis", configs)
    finally:
        plan._OVERRIDE.pop()
    assert [c["seed"] for c in out] == [0, 1, 2, 3, 4]
    assert all(c["train"]["seed"] == c["seed"] and c["train"]["grad_backend"] == "ghost" for c in out[3:])
    assert configs[2]["seed"] == 2  # the template is not changed


def test_a_verdict_never_uses_more_seeds_than_planned():
    from dpnotes.report import scoreboard
    from dpnotes.results import Store

    if not os.environ.get("DPNOTES_DATA_MIRROR"):
        pytest.skip("set DPNOTES_DATA_MIRROR")
    store = Store(os.path.join(os.path.dirname(__file__), os.pardir, "results"))
    rows = [r for r in scoreboard(store=store) if r.get("planned") is not None]
    assert rows
    assert all(r["seeds"] <= r["planned"] for r in rows), [r["id"] for r in rows if r["seeds"] > r["planned"]]


@pytest.mark.parametrize("p, margin, sd, means, sign", [
    (2.23, 1.115, 0.77, (2.23, 1.66), True),   # DPlis MNIST CNN R_best - No, as planned
    (95.0, 1.0, 0.5, (95.0, 94.2), False),      # a training cell
])
def test_the_planned_n_decides_in_simulation(p, margin, sd, means, sign):
    """Draw seeds from a normal with a known SD: the planned n decides (reproduced or not reproduced)
    in >= 80 % of draws for every true mean it was planned for, within Monte-Carlo error."""
    from scipy.stats import t

    n = power.seeds_needed(p, margin, sd, means, sign=sign, n_max=60)
    assert n is not None
    rng = np.random.default_rng(7)
    draws = 20000
    for mean in means:
        x = rng.normal(mean, sd, size=(draws, n))
        m, s = x.mean(1), x.std(1, ddof=1)
        h = t.ppf(0.975, n - 1) * s / np.sqrt(n)
        lo, hi = m - h, m + h
        reproduced = (p - margin <= lo) & (hi <= p + margin)
        wrong = (hi < 0) if (sign and p > 0) else np.zeros(draws, bool)
        against = (hi < p - margin) | (lo > p + margin) | wrong
        decided = (reproduced | against).mean()
        assert decided >= 0.8 - 4 * np.sqrt(0.8 * 0.2 / draws), (mean, n, decided)


def test_the_plan_table_names_its_commit_and_each_rows_status(tmp_path):
    from dpnotes.report import seeds_plan
    from dpnotes.results import Store

    text = seeds_plan.markdown(seeds_plan.table(Store(tmp_path)))
    assert all(f"`{r.claim}`" in text for r in plan.load().rows)
    assert f"Fixed {plan.load().fixed}" in text and "run |" in text
    commit = seeds_plan._plan_commit()
    assert commit is None or f"committed in {commit}" in text
