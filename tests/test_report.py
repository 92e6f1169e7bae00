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


@pytest.mark.parametrize("printed, per_seed, verdict", [
    ("+0.98", [0.4, 0.6, 0.9], "reproduced"),  # same sign, within the floor
    ("+0.06", [-0.09], "not_reproduced"),  # within the floor, but the other sign
    ("+0.06", [0.2, -0.5, -0.1], "not_reproduced"),  # mean -0.13: the other sign
    ("+1.54", [0.4], "not_reproduced"),  # the paper's sign, too small
    ("-0.30", [-0.2, -0.4], "reproduced"),
    ("0.00", [-0.3, 0.1], "reproduced"),  # a printed 0 asks for no sign
])
def test_gain_needs_the_papers_sign_and_size(printed, per_seed, verdict):
    ev = verdicts.judge(claim(printed, kind="training", tolerance=1.0),
                        measurement.gain(ID, per_seed, [str(i) for i in range(len(per_seed))]))
    assert ev.verdict == verdict and ev.ours == pytest.approx(sum(per_seed) / len(per_seed))
    assert ev.flags == (("single-seed",) if len(per_seed) == 1 else ())
    if verdict == "not_reproduced" and "band" in ev.detail and abs(ev.ours - float(printed)) <= 1:
        assert "sign differs" in ev.detail
    none = verdicts.judge(claim(printed, kind="training", tolerance=1.0), measurement.gain(ID, [None], ["a"]))
    assert none.verdict == "not_reproduced"


def test_training_band_is_twice_the_sd_of_the_seeds_or_the_floor():
    c = claim("96.6", kind="training", tolerance=1.0)
    # mean 95.0, sd 1.0: the band is 2.0 > the floor 1.0, so 96.6 lies within the seeds' spread
    wide = verdicts.judge(c, measurement.training(ID, [94.0, 95.0, 96.0], ["a", "b", "c"]))
    assert wide.verdict == "reproduced" and "band +-2" in wide.detail and wide.flags == ()
    # mean 95.0, sd 0.1: the floor 1.0 decides, and 96.6 lies outside
    tight = verdicts.judge(c, measurement.training(ID, [94.9, 95.0, 95.1], ["a", "b", "c"]))
    assert tight.verdict == "not_reproduced" and "band +-1" in tight.detail
    assert verdicts.band([94.0, 95.0, 96.0], 1.0) == pytest.approx(2.0)
    assert verdicts.band([5.0], 1.0) == 1.0


def test_a_one_seed_record_is_judged_on_the_floor_and_flagged():
    c = claim("96.6", kind="training", tolerance=1.0)
    for value, verdict in ((96.0, "reproduced"), (95.0, "not_reproduced")):
        ev = verdicts.judge(c, measurement.training(ID, [value], ["a"]))
        assert ev.verdict == verdict and ev.flags == (verdicts.SINGLE_SEED,)
        assert "single-seed evidence" in ev.detail
    failed = verdicts.judge(c, measurement.training(ID, [None], ["a"], "never reached 97%"))
    assert failed.verdict == "not_reproduced" and failed.flags == (verdicts.SINGLE_SEED,)


def trend(values, floor=1.0):
    return measurement.trend(ID, values, floor, "epochs MA - CLT", "MA - CLT > 0",
                             [f"r{i}" for i in range(2 * len(values))])


def test_a_zero_gain_is_no_trend():
    stmt = claim(None, kind="statement")
    assert verdicts.judge(stmt, trend([0.0, 0.0, 0.0])).verdict == "not_reproduced"
    assert verdicts.judge(stmt, trend([0.0])).verdict == "not_reproduced"


def test_a_trend_in_every_seed_is_reproduced():
    ev = verdicts.judge(claim(None, kind="statement"), trend([0.5, 2.0, 1.0]))
    assert ev.verdict == "reproduced" and "3 of 3 seed(s)" in ev.ours and ev.flags == ()
    assert ev.evidence == [f"r{i}" for i in range(6)] and ev.detail == "MA - CLT > 0"


def test_a_trend_in_2_of_3_seeds_needs_its_mean_above_the_margin():
    stmt = claim(None, kind="statement")
    # mean 1.5 vs 2 SE = 2.08 (sd 1.80): not enough
    weak = verdicts.judge(stmt, trend([3.0, 2.0, -0.5]))
    assert weak.verdict == "not_reproduced" and "2 of 3 seed(s)" in weak.ours
    # With three seeds one of which shows no trend, mean <= 2 SE always (equality at [a, a, 0])
    assert verdicts.judge(stmt, trend([12.0, 12.0, -0.1])).verdict == "not_reproduced"
    # with more seeds the mean can clear 2 SE without every seed: mean 7.6 vs 2 SE 4.8
    assert verdicts.judge(stmt, trend([10.0, 10.0, 10.0, 10.0, -2.0])).verdict == "reproduced"
    # ... but not a stated floor above the mean
    assert verdicts.judge(stmt, trend([10.0, 10.0, 10.0, 10.0, -2.0], floor=8.0)).verdict == "not_reproduced"


def test_a_one_seed_trend_is_decided_by_that_seed_and_flagged():
    for value, verdict in ((0.5, "reproduced"), (-0.5, "not_reproduced")):
        ev = verdicts.judge(claim(None, kind="statement"), trend([value]))
        assert ev.verdict == verdict and ev.flags == (verdicts.SINGLE_SEED,)


def test_rules_are_stated_from_the_constants_the_rules_use():
    text = verdicts.rules_markdown()
    assert f"max({verdicts.SPREAD_SDS:g} SD" in text and f"max({verdicts.TREND_SES:g} SE" in text
    assert verdicts.SINGLE_SEED in text


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
    dict(kind="trend", values=(1.0,)),
    dict(kind="trend", values=("yes",), rule="r"),
    dict(kind="trend", values=(1.0,), rule="r", floor=-1.0),
])
def test_malformed_measurements_rejected(bad):
    with pytest.raises(ValueError):
        Measurement(ID, **bad)


def test_unknown_verdict_rejected():
    with pytest.raises(ValueError, match="verdict must be one of"):
        verdicts.Evidence("gdp.x", "probably")
