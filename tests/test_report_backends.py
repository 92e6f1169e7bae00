"""The chapters' statement of which gradient backend their runs used (dpnotes.report.backends)."""

from __future__ import annotations

import pytest

from dpnotes.report import backends


def _record(rid, backend=None, private=True, device="cpu: x86_64, 1 threads"):
    train = {"private": private, **({"grad_backend": backend} if backend else {})}
    return {"id": rid, "spec": {"train": train}, "provenance": {"segments": [{"device": device}]}}


def test_counts_by_backend_and_device():
    records = [_record("a"), _record("b", "ghost"), _record("c", "ghost", device="cuda: NVIDIA H200"),
               _record("d", private=False), {"id": "e", "spec": {"train": None},
                                             "provenance": {"segments": [{"device": "cpu: x, 2 threads"}]}}]
    assert backends.counts(records) == {("func", "cpu"): 1, ("ghost", "cpu"): 1, ("ghost", "cuda"): 1,
                                        (None, "cpu"): 2}


def test_markdown_names_counts_and_the_equality_test():
    text = backends.markdown("dpis", [_record("a"), _record("b", "ghost"), _record("c", "ghost", device="cuda: G"),
                                      _record("d", private=False)])
    assert "`func` (torch.func per-example gradients): 1 run (1 on a CPU)" in text
    assert "`ghost` (per-example norms without per-example gradients): 2 runs (1 on a CPU, 1 on a GPU)" in text
    assert "tests/test_train_ghost.py" in text and "GHOST_FROM_SEED" not in text
    planned = backends.markdown("sadpsgd", [_record("a")], {"t.b": 1, "t.a": 2})
    assert "`dpnotes.experiments.sadpsgd.GHOST_FROM_SEED`): `t.a` from seed 2, `t.b` from seed 1." in planned
    assert "tests/test_train_ghost.py" in planned
    assert "Without per-example gradients (non-private runs and baselines): 1 run (1 on a CPU)." in text
    only_func = backends.markdown("gdp", [_record("a")])
    assert "`func`" in only_func and "ghost" not in only_func
    assert backends.markdown("gdp", []) == "No paper-profile run of gdp is stored yet."


@pytest.mark.parametrize("record, message", [
    (_record("x", device="tpu: v4"), r"record x: provenance device must start with 'cpu:' or 'cuda:', got 'tpu'"),
    (_record("y", "jax"), r"record y: grad_backend must be one of \['func', 'ghost', 'opacus'\], got 'jax'"),
])
def test_bad_records_are_named(record, message):
    with pytest.raises(ValueError, match=message):
        backends.counts([record])


def test_every_committed_record_is_readable():
    from pathlib import Path

    from dpnotes.results import Store
    store = Store(Path(__file__).resolve().parents[1] / "results")
    for paper in ("dpis", "dplis", "gdp", "labeldp", "sadpsgd"):
        c = backends.counts(store.records(paper, "paper"))
        assert sum(c.values()) > 0, paper


def test_draws_markdown_counts_dplis_smoothed_runs_by_their_draws():
    def smoothed(draws=None, method="dplis"):
        return {"spec": {"method": method, "method_config": {"K": 10, **({"draws": draws} if draws else {})}}}

    text = backends.draws_markdown([smoothed(), smoothed(), smoothed("implicit-first-layer"), smoothed(method="dpsgd")],
                                   {"t.b.r*": 1})
    assert text.startswith("Smoothed runs stored: 2 drew all K perturbations with `torch.randn`; 1 drew the first")
    assert text.endswith("(`DRAWS_FROM_SEED`): `t.b.r*` from seed 1.")
    assert backends.draws_markdown([smoothed(method="dpsgd")], {}) == ""
