"""Not-run reasons as data (dpnotes.experiments.not_run): every paper's table of claim-id patterns
matches each claim its module does not measure exactly once, and no measured claim; the reasons
of claims that wait for paper-profile runs give their count and cost."""

from __future__ import annotations

import re

import pytest

from dpnotes import claims
from dpnotes.experiments import module, not_run

PAPERS = ("dplis", "dpis", "gdp", "labeldp", "sadpsgd")


def _table(m) -> not_run.Table:
    return m.not_run_table() if hasattr(m, "not_run_table") else m.NOT_RUN_TABLE


@pytest.fixture(scope="module")
def measured():
    return {p: {x.claim_id for x in module(p).measure([])} for p in PAPERS}


@pytest.mark.parametrize("paper", PAPERS)
def test_every_not_run_claim_is_matched_exactly_once(paper, measured):
    m = module(paper)
    assert not_run.problems(paper, _table(m), measured[paper]) == []
    reasons = m.NOT_RUN
    own = {c.id for c in claims.load(paper) if not_run.registry_reason(c) is not None}
    assert not (set(reasons) - own) & measured[paper]  # a measured claim takes no row's reason,
    for c in claims.load(paper):  # and every other has one: the default text is never needed
        assert c.id in measured[paper] or c.id in reasons, c.id
    assert m.NOT_RUN_DEFAULT == not_run.DEFAULT


@pytest.mark.parametrize("paper", PAPERS)
def test_no_reason_says_not_defined_or_gpu_profile(paper):
    for cid, reason in module(paper).NOT_RUN.items():
        assert "not defined" not in reason and "GPU profile" not in reason, (cid, reason)


def test_waiting_claims_say_how_many_runs_and_hours():
    pattern = re.compile(r"needs the paper profile: (\d+) runs? \(.+\), about [\d.,]+ (GPU-hours / [\d.,]+ )?CPU-hours")
    examples = {"dplis.table2.mnist_mlp.eps10_00.acc_r10": 1, "dplis.table2.mnist_mlp.eps10_00.gain_r10": 2,
                "dplis.table10.cifar10_cnn.eps5_01.r30.std": 5, "labeldp.table1.lp_2st.col1": 1,
                "dpis.table3.cifar10.eps2.dpis": 1}
    for cid, n in examples.items():
        reason = module(cid.split(".")[0]).NOT_RUN[cid]
        found = pattern.match(reason)
        assert found and int(found.group(1)) == n, reason


def _fake_claims(monkeypatch, ids, notes=None):
    notes = notes or {}
    fake = [claims.Claim(id=i, source="s", kind="exact", value="1", note=notes.get(i)) for i in ids]
    monkeypatch.setattr(claims, "load", lambda paper: fake)


def test_overlapping_rows_are_refused(monkeypatch):
    _fake_claims(monkeypatch, ["p.a.x", "p.b.x"])
    table = (("p.a.*", "A"), ("p.*.x", "X"))
    with pytest.raises(ValueError, match=r"p.a.x: matched by 2 not-run rows \(p.a.\*, p.\*.x\)"):
        not_run.reasons("p", table)
    assert not_run.problems("p", table, ()) == ["p.a.x: matched by 2 rows"]


def test_problems_name_unmatched_claims_and_unused_rows(monkeypatch):
    _fake_claims(monkeypatch, ["p.a", "p.b", "p.c", "p.m"], {"p.c": "Baseline quoted from X."})
    table = (("p.[am]", "A"), ("p.z*", "Z"))
    assert not_run.problems("p", table, {"p.m"}) == ["p.b: matched by 0 rows", "row 'p.z*' matches no not-run claim"]
    # the registry's own reason (here a quoted baseline) needs no row; a measured claim takes none
    assert not_run.reasons("p", table, {"p.m"}) == {"p.a": "A", "p.c": not_run.QUOTED}
    assert not_run.reasons("p", table) == {"p.a": "A", "p.c": not_run.QUOTED, "p.m": "A"}


def test_needs_runs_refuses_nothing():
    with pytest.raises(ValueError, match="configs must not be empty"):
        not_run.needs_runs([])
