"""Verdicts are computed from claims and measurements, never written by hand."""

import pytest

from dpnotes.claims import Claim
from dpnotes.experiments import measurement
from dpnotes.experiments.measurement import KINDS, Measurement
from dpnotes.report import verdicts

ID = "gdp.test.x"


def claim(value, kind="exact", tolerance=None):
    return Claim(id=ID, source="test", kind=kind, value=value, tolerance=tolerance)


@pytest.mark.parametrize("printed, ours, verdict", [
    ("3.01", 3.0149, "reproduced"),
    ("3.01", 3.0051, "reproduced"),
    ("3.01", 3.0151, "not_reproduced"),
    ("3.01", 3.0049, "not_reproduced"),
    ("32.40", 32.4012, "reproduced"),
    ("15", 15.4, "reproduced"),
    ("15", 15.6, "not_reproduced"),
])
def test_exact_compares_printed_digits(printed, ours, verdict):
    ev = verdicts.judge(claim(printed), measurement.exact(ID, ours))
    assert ev.verdict == verdict and ev.ours == ours and ev.evidence == "computed"
    assert (ev.detail is None) == (verdict == "reproduced")


def test_exact_without_paper_value_is_not_run_but_shows_ours():
    ev = verdicts.judge(claim(None), measurement.exact(ID, 1.0))
    assert ev.verdict == "not_run" and "missing" in ev.evidence and ev.ours == 1.0


def test_exact_keeps_its_stated_basis():
    ev = verdicts.judge(claim("2.72"), measurement.exact(ID, 2.718, "exp(1)"))
    assert ev.verdict == "reproduced" and ev.evidence == "exp(1)"


def test_training_uses_mean_over_seeds_and_tolerance():
    c = claim("96.6", kind="training", tolerance=1.0)
    ok = verdicts.judge(c, measurement.training(ID, [95.9, 96.3, 96.1], ["a", "b", "c"]))
    assert ok.verdict == "reproduced" and ok.ours == pytest.approx(96.1)
    assert "3 seed" in ok.detail and ok.evidence == ["a", "b", "c"]
    bad = verdicts.judge(c, measurement.training(ID, [95.0, 95.4], ["a", "b"]))
    assert bad.verdict == "not_reproduced"
    assert verdicts.judge(c, measurement.training(ID, [], [])).verdict == "not_run"


def test_training_without_paper_value_is_not_run_but_shows_the_mean():
    ev = verdicts.judge(claim(None, kind="training"), measurement.training(ID, [1.0, 3.0], ["a", "b"]))
    assert ev.verdict == "not_run" and ev.ours == 2.0 and "paper value missing" in ev.detail


def test_a_run_without_a_value_is_not_reproduced():
    c = claim("45", kind="training", tolerance=5.0)
    m = measurement.training(ID, [45, None], ["a", "b"], "1 run(s) never reached 97%")
    ev = verdicts.judge(c, m)
    assert (ev.verdict, ev.ours, ev.evidence, ev.detail) == (
        "not_reproduced", None, ["a", "b"], "1 run(s) never reached 97%")


@pytest.mark.parametrize("holds, verdict", [(True, "reproduced"), (False, "not_reproduced")])
def test_statement_reproduced_iff_the_fact_holds(holds, verdict):
    fact = measurement.statement(ID, holds, "gap 0.01", "gap <= 0.03")
    ev = verdicts.judge(claim(None, kind="statement"), fact)
    assert (ev.verdict, ev.ours, ev.evidence, ev.detail) == (verdict, "gap 0.01", "computed", "gap <= 0.03")
    runs = measurement.statement(ID, holds, "gap 0.01", "gap <= 0.03", ["a", "b"])
    assert verdicts.judge(claim(None, kind="statement"), runs).evidence == ["a", "b"]


def test_missing_is_not_run_with_its_reason():
    ev = verdicts.judge(claim("96.6", kind="training", tolerance=1.0),
                        measurement.missing(ID, "paper-profile run missing", "quick run: 90%"))
    assert (ev.verdict, ev.ours, ev.evidence, ev.detail) == (
        "not_run", None, "paper-profile run missing", "quick run: 90%")


def test_every_kind_has_exactly_one_rule():
    assert set(verdicts.RULES) == set(KINDS)


def test_judge_refuses_a_measurement_of_another_claim():
    with pytest.raises(ValueError, match="cannot answer"):
        verdicts.judge(claim("1.0"), measurement.exact("gdp.other", 1.0))


@pytest.mark.parametrize("bad", [
    dict(kind="guess"),
    dict(kind="exact", values=(1.0, 2.0)),
    dict(kind="training", values=(1.0,), record_ids=()),
    dict(kind="statement", values=(True,)),
    dict(kind="statement", values=("yes",), rule="r"),
    dict(kind="missing", values=(1.0,)),
])
def test_malformed_measurements_rejected(bad):
    with pytest.raises(ValueError):
        Measurement(ID, **bad)


def test_unknown_verdict_rejected():
    with pytest.raises(ValueError, match="verdict must be one of"):
        verdicts.Evidence("gdp.x", "probably")
