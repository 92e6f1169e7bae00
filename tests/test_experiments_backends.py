"""The per-experiment backend choice (issue #36 item 1): new seeds on ghost, stored ids kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpnotes import experiments
from dpnotes.experiments import backends
from dpnotes.results import Store

ROOT = Path(__file__).resolve().parents[1] / "results"
PAPERS = ("dpis", "dplis", "sadpsgd")


def _config(experiment="t.a", seed=0, **train):
    return {"experiment": experiment, "seed": seed, "train": {"lr": 0.1, **train}}


def test_choose_switches_only_matching_experiments_from_their_first_seed():
    rule = {"t.a": 1, "u.*": 0}
    assert backends.choose(c := _config(seed=0), rule) is c
    assert backends.choose(_config(seed=1), rule)["train"] == {"lr": 0.1, "grad_backend": "ghost"}
    assert backends.choose(_config(seed=2, grad_backend="ghost"), rule)["train"]["grad_backend"] == "ghost"
    assert backends.choose(_config("u.b", 0), rule)["train"]["grad_backend"] == "ghost"
    assert backends.choose(c := _config("t.ab", 5), rule) is c  # fnmatch, not prefix
    assert "grad_backend" not in c["train"]  # the input is never changed


def test_choose_refuses_conflicts():
    with pytest.raises(ValueError, match=r"experiment 't.a' seed 1: grad_backend 'func' conflicts"):
        backends.choose(_config(seed=1, grad_backend="func"), {"t.a": 1})
    with pytest.raises(ValueError, match=r"experiment 't.a': GHOST_FROM_SEED patterns disagree \(\[0, 1\]\)"):
        backends.choose(_config(), {"t.*": 0, "*.a": 1})


@pytest.mark.parametrize("paper", PAPERS)
def test_every_rule_reaches_runs_and_spares_stored_seeds(paper):
    """Each pattern switches at least one paper-profile run, and no committed record's experiment
    and seed fall under a switch (their ids would change)."""
    rule = experiments.module(paper).GHOST_FROM_SEED
    configs = experiments.module(paper).configs("paper")
    for pattern in rule:
        assert any(backends.first_ghost_seed(c["experiment"], {pattern: rule[pattern]}) is not None
                   and c["seed"] >= rule[pattern] and c["train"]["grad_backend"] == "ghost" for c in configs), pattern
    stored = list(Store(ROOT).records(paper, "paper"))
    assert stored
    for record in stored:
        spec = record["spec"]
        first = backends.first_ghost_seed(spec["experiment"], rule)
        assert first is None or spec["seed"] < first or spec["train"]["grad_backend"] == "ghost", record["id"]


@pytest.mark.parametrize("paper", PAPERS)
def test_runs_below_the_first_ghost_seed_keep_their_backend(paper):
    rule = experiments.module(paper).GHOST_FROM_SEED
    for c in experiments.module(paper).configs("paper"):
        first = backends.first_ghost_seed(c["experiment"], rule)
        if first is not None and c["seed"] < first:
            assert c["train"].get("grad_backend") in (None, "func"), (c["experiment"], c["seed"])
