"""Verdicts are computed from claims and measurements, never written by hand (verdicts v2:
intervals over seeds, equivalence margins, paired comparisons, inconclusive, fidelity)."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpnotes.claims import Claim
from dpnotes.experiments import measurement
from dpnotes.experiments.measurement import KINDS, Measurement
from dpnotes.report import verdicts

ID = "gdp.test.x"
SD = (0.2, 5)  # a plausible seed SD pooled over 5 cells


def claim(value, kind="exact", tolerance=None, context=None):
    return Claim(id=ID, source="test", kind=kind, value=value, tolerance=tolerance, context=context)


def acc(value="95.0", tolerance=1.0):
    return claim(value, kind="training", tolerance=tolerance)


def train(values, **kw):
    return measurement.training(ID, values, [f"r{i}" for i in range(len(values))], **kw)


def gain(diffs, base=90.0):
    seeds = range(len(diffs))
    return measurement.gain(ID, {s: base + d for s, d in zip(seeds, diffs)}, {s: base for s in seeds},
                            {s: f"r{s}" for s in seeds})


# --------------------------------------------------------------------------------------
# Exact claims.

@pytest.mark.parametrize("printed, ours, verdict", [
    ("3.01", 3.0149, "reproduced"),
    ("3.01", 3.0051, "reproduced"),
    ("3.01", 3.0201, "not_reproduced"),
    ("3.01", 3.0049, "not_reproduced"),
    ("32.40", 32.4012, "reproduced"),
    ("15", 15.4, "reproduced"),
    ("15", 16.2, "not_reproduced"),
    ("15", 14.4, "not_reproduced"),
])
def test_exact_compares_printed_digits(printed, ours, verdict):
    ev = verdicts.judge(claim(printed), measurement.exact(ID, ours))
    assert ev.verdict == verdict and ev.ours == ours and ev.evidence == "computed"
    assert ev.fidelity == "paper" and ev.seeds is None
    assert (ev.detail is None) == (verdict == "reproduced")


@pytest.mark.parametrize("printed, ours", [("5.01", 5.0189), ("159.1", 159.17), ("1.34", 1.3471)])
def test_a_printing_follows_its_tables_convention(printed, ours):
    # in a table that truncates, cutting to the paper's digits reproduces (and the detail says so) ...
    ev = verdicts.judge(claim(printed), measurement.exact(ID, ours), convention="truncate", convention_why="w")
    assert ev.verdict == "reproduced" and "truncates" in ev.detail
    # ... in a table that rounds, a value that matches only when cut is not reproduced
    ev = verdicts.judge(claim(printed), measurement.exact(ID, ours))
    assert ev.verdict == "not_reproduced" and "only cutting" in ev.detail
    # a real difference (neither rounding nor cutting gives the paper's digits) stays one
    for convention in verdicts.CONVENTIONS:
        assert verdicts.judge(claim(printed), measurement.exact(ID, ours + 0.1),
                              convention=convention).verdict == "not_reproduced"


def test_a_tables_convention_is_what_most_of_its_values_say():
    c = [Claim(id=f"gdp.t.{i}", source="s", kind="exact", value=v) for i, v in enumerate(("1.34", "2.50", "3.10"))]
    assert verdicts.convention_of([(c[0], 1.3471), (c[1], 2.4999), (c[2], 3.1)])[0] == "round"
    assert verdicts.convention_of([(c[0], 1.3471), (c[1], 2.5049), (c[2], 3.1)])[0] == "truncate"


def test_lost_values_and_quoted_baselines_are_context_not_claims():
    lost = verdicts.judge(claim(None), measurement.exact(ID, 1.0))
    assert (lost.category, lost.verdict, lost.ours) == ("lost", "not_run", 1.0)
    quoted = verdicts.judge(claim("95", kind="training", tolerance=1.0, context="quoted"),
                            measurement.missing(ID, "quoted from another paper"))
    assert quoted.category == "quoted" and quoted.verdict == "not_run"
    # a statement has no printed value and is still a claim
    stmt = verdicts.judge(claim(None, kind="statement"), measurement.statement(ID, True, "d", "r"))
    assert stmt.category == "claim" and stmt.verdict == "reproduced"


# --------------------------------------------------------------------------------------
# Training claims: interval against paper +- margin.

def test_training_interval_inside_the_margin_is_reproduced():
    ev = verdicts.judge(acc("95.0"), train([94.9, 95.1, 95.0]))
    assert ev.verdict == "reproduced" and ev.seeds == 3 and ev.margin == 1.0
    lo, hi = ev.interval
    assert 94.0 <= lo < 95.0 < hi <= 96.0


def test_training_far_interval_is_not_reproduced_and_wide_one_inconclusive():
    assert verdicts.judge(acc("95.0"), train([92.0, 92.1, 91.9])).verdict == "not_reproduced"
    wide = verdicts.judge(acc("95.0"), train([93.0, 95.0, 97.0]))
    assert wide.verdict == "inconclusive" and "too wide" in wide.detail


def test_the_interval_is_students_t():
    mean, lo, hi = verdicts.interval([1.0, 2.0, 3.0])
    assert mean == 2.0 and hi - mean == pytest.approx(4.302653 * 1.0 / math.sqrt(3), rel=1e-6)


def test_the_t_quantile_is_scipy_stats_own_for_every_seed_count():
    from scipy.stats import t

    for n in range(2, 60):
        verdicts.t_quantile.cache_clear()
        assert verdicts.t_quantile(n) == float(t.ppf(0.5 + verdicts.CONFIDENCE / 2, n - 1))


def test_an_outlier_seed_replaced_in_a_reproduced_claim_makes_it_inconclusive_not_reproduced():
    # GDP Table 1 row 1 with one seed's accuracy edited to 10%: v1's band widened to +-97.9
    ev = verdicts.judge(acc("95.0"), train([95.1, 94.9, 10.0]))
    assert ev.verdict != "reproduced"


@settings(max_examples=300, deadline=None)
@given(seeds=st.lists(st.floats(90, 100), min_size=1, max_size=4), paper=st.floats(90, 100),
       margin=st.floats(0.1, 2), distance=st.floats(3, 50), sign=st.sampled_from([-1, 1]))
def test_property_an_outlier_seed_never_makes_a_claim_reproduced(seeds, paper, margin, distance, sign):
    """With up to 5 seeds, a seed at least 3 margins from the paper's value can never make the
    claim reproduced: it widens the interval or drags the mean out of the margin."""
    c = acc(f"{paper:.2f}", margin)
    outlier = c.number + sign * distance * margin
    assert verdicts.judge(c, train(seeds + [outlier]), SD).verdict != "reproduced"


@settings(max_examples=200, deadline=None)
@given(value=st.floats(80, 100), paper=st.floats(80, 100), sd=st.floats(0.01, 2))
def test_property_one_seed_never_reproduces_and_decides_only_far_away(value, paper, sd):
    c = acc(f"{paper:.2f}")
    ev = verdicts.judge(c, train([value]), (sd, 3))
    assert ev.verdict in ("inconclusive", "not_reproduced") and ev.seeds == 1
    far = abs(value - c.number) > 1.0 + verdicts.DECISIVE_SDS * sd
    assert (ev.verdict == "not_reproduced") == far


def test_one_seed_near_the_paper_reads_inconclusive_and_says_why():
    ev = verdicts.judge(acc("95.0"), train([95.02]), SD)
    assert ev.verdict == "inconclusive" and "one seed" in ev.detail
    # without any multi-seed cell there is no allowance at all: inconclusive whatever the gap
    assert verdicts.judge(acc("95.0"), train([50.0]), None).verdict == "inconclusive"


def test_a_run_without_a_value_is_not_reproduced_and_keeps_its_caveat():
    m = train([45, None], detail="1 run(s) never reached 97%")
    ev = verdicts.judge(acc("45", 5.0), m)
    assert (ev.verdict, ev.ours, ev.evidence, ev.note) == ("not_reproduced", None, ["r0", "r1"],
                                                            "1 run(s) never reached 97%")


def test_plausible_sd_pools_multi_seed_cells_only():
    ms = [train([1.0, 3.0]), train([5.0]), train([2.0, 2.0, 2.0]), train([4.0, 4.0]), measurement.exact(ID, 1.0)]
    sd, cells = verdicts.plausible_sd(ms, "training")
    assert cells == 3 and sd == pytest.approx(math.sqrt(2.0 / 4.0))
    assert verdicts.plausible_sd([train([1.0])], "training") is None
    # two seeds of one cell (1 degree of freedom) are no basis for an allowance
    assert verdicts.plausible_sd([train([1.0, 3.0]), train([2.0, 2.5])], "training") is None


# --------------------------------------------------------------------------------------
# Gains and comparisons: paired seeds only.

def test_unpaired_arms_are_refused():
    with pytest.raises(ValueError, match="unpaired arms"):
        measurement.gain(ID, {0: 91.0, 1: 92.0}, {0: 90.0, 2: 90.5}, {0: "a", 1: "b"})
    with pytest.raises(ValueError, match="at least one seed"):
        measurement.gain(ID, {}, {}, {})


def test_a_gain_with_a_decided_direction_and_the_papers_sign_is_reproduced():
    ev = verdicts.judge(claim("+0.5", kind="training", tolerance=1.0), gain([0.4, 0.6, 0.5]))
    assert ev.verdict == "reproduced" and ev.paired and ev.seeds == 3


def test_a_gain_decided_against_the_papers_sign_is_not_reproduced():
    ev = verdicts.judge(claim("+0.5", kind="training", tolerance=1.0), gain([-0.4, -0.5, -0.45]))
    assert ev.verdict == "not_reproduced" and "opposite direction" in ev.detail


def test_a_gain_whose_interval_holds_zero_is_inconclusive():
    # DPlis MNIST MLP: paper +0.06, ours -0.09 on one seed, the paper's own spread 1.6 points
    assert verdicts.judge(claim("+0.06", kind="training", tolerance=1.0), gain([-0.09]), SD).verdict == "inconclusive"
    ev = verdicts.judge(claim("+0.06", kind="training", tolerance=1.0), gain([-0.3, 0.2, 0.1]))
    assert ev.verdict == "inconclusive" and "too wide" in ev.detail


def test_paired_differences_remove_the_common_noise():
    # arms far apart in level but always 0.5 apart in the same seed: the gain is decided
    arm = {0: 80.5, 1: 90.5, 2: 85.5}
    base = {0: 80.0, 1: 90.0, 2: 85.0}
    m = measurement.gain(ID, arm, base, {s: f"r{s}" for s in arm})
    ev = verdicts.judge(claim("+0.5", kind="training", tolerance=1.0), m)
    assert ev.verdict == "reproduced" and ev.interval == (pytest.approx(0.5), pytest.approx(0.5))


def test_comparisons_decide_a_statement_by_their_intervals():
    def stmt(*comparisons):
        return measurement.statement(ID, True, "numbers", "A beats B", ["a"], 3, comparisons=comparisons)

    c = claim(None, kind="statement")
    assert verdicts.judge(c, stmt(("x", [0.1, 0.2, 0.15]), ("y", [1.0, 1.1, 0.9]))).verdict == "reproduced"
    assert verdicts.judge(c, stmt(("x", [0.1, 0.2, 0.15]), ("y", [-1.0, -1.1, -0.9]))).verdict == "not_reproduced"
    assert verdicts.judge(c, stmt(("x", [0.1, -0.2, 0.15]))).verdict == "inconclusive"
    # one seed: decided only beyond DECISIVE_SDS paired-difference SDs
    assert verdicts.judge(c, stmt(("x", [5.0])), SD).verdict == "reproduced"
    assert verdicts.judge(c, stmt(("x", [0.3])), SD).verdict == "inconclusive"
    assert verdicts.judge(c, stmt(("x", [5.0])), None).verdict == "inconclusive"
    # a comparison no seed can decide (values ()) keeps it from being reproduced, not from failing
    undecided = verdicts.judge(c, stmt(("x", [0.1, 0.2, 0.15]), ("y", ())))
    assert undecided.verdict == "inconclusive" and "y: no seed can say" in undecided.detail and undecided.seeds == 3
    assert verdicts.judge(c, stmt(("x", [-0.1, -0.2, -0.15]), ("y", ()))).verdict == "not_reproduced"


def test_an_existential_statement_needs_one_comparison_above_zero():
    def some(*comparisons):
        return measurement.statement(ID, True, "numbers", "A below B somewhere", ["a"], 3,
                                     comparisons=comparisons, quantifier="some")

    c = claim(None, kind="statement")
    assert verdicts.judge(c, some(("x", [0.1, 0.2, 0.15]), ("y", [-1.0, -1.1, -0.9]))).verdict == "reproduced"
    assert verdicts.judge(c, some(("x", [-0.1, -0.2, -0.15]), ("y", [-1.0, -1.1, -0.9]))).verdict == "not_reproduced"
    assert verdicts.judge(c, some(("x", [0.1, -0.2, 0.15]), ("y", [-1.0, -1.1, -0.9]))).verdict == "inconclusive"
    assert verdicts.judge(c, some(("x", [-0.1, -0.2, -0.15]), ("y", ()))).verdict == "inconclusive"


def test_trend_needs_its_interval_above_zero():
    def trend(values, floor=0.0):
        return measurement.trend(ID, values, floor, "epochs MA - CLT", "MA - CLT > 0", ["a"])

    c = claim(None, kind="statement")
    assert verdicts.judge(c, trend([2.0, 2.5, 3.0])).verdict == "reproduced"
    assert verdicts.judge(c, trend([2.0, 2.5, 3.0], floor=5.0)).verdict == "inconclusive"
    assert verdicts.judge(c, trend([-2.0, -2.5, -3.0])).verdict == "not_reproduced"
    assert verdicts.judge(c, trend([0.0, 0.0, 0.0])).verdict == "not_reproduced"  # no trend at all
    assert verdicts.judge(c, trend([3.0, 2.0, -0.5])).verdict == "inconclusive"
    assert verdicts.judge(c, trend([4.0])).verdict == "inconclusive"


# --------------------------------------------------------------------------------------
# Statements, caveats, fidelity.

@pytest.mark.parametrize("holds, verdict", [(True, "reproduced"), (False, "not_reproduced")])
def test_statement_reproduced_iff_the_fact_holds(holds, verdict):
    fact = measurement.statement(ID, holds, "gap 0.01", "gap <= 0.03")
    ev = verdicts.judge(claim(None, kind="statement"), fact)
    assert (ev.verdict, ev.ours, ev.evidence, ev.detail) == (verdict, "gap 0.01", "computed", "gap <= 0.03")
    assert ev.note is None  # the numbers are shown once, as ours, not again as the caveat
    runs = measurement.statement(ID, holds, "gap 0.01", "gap <= 0.03", ["a", "b"], seeds=2)
    assert verdicts.judge(claim(None, kind="statement"), runs).evidence == ["a", "b"]


def test_a_statement_on_one_seed_is_inconclusive():
    one = measurement.statement(ID, True, "gap 0.01", "gap <= 0.03", ["a"], seeds=1)
    ev = verdicts.judge(claim(None, kind="statement"), one)
    assert ev.verdict == "inconclusive" and ev.seeds == 1


@pytest.mark.parametrize("m", [
    train([95.0], detail="an inferred eps column"),
    train([94.9, 95.1, 95.0], detail="an inferred eps column"),
    measurement.exact(ID, 95.0),
])
def test_caveats_and_substitutes_always_reach_the_evidence(m):
    import dataclasses

    c = acc("95.0") if m.kind == "training" else claim("95.0")
    m = dataclasses.replace(m, substitute="model: a small CNN")
    ev = verdicts.judge(c, m, SD)
    assert ev.fidelity == "substitute" and ev.substitute == "model: a small CNN"
    assert ev.note == m.detail


def test_missing_is_not_run_with_its_reason():
    ev = verdicts.judge(acc("96.6"), measurement.missing(ID, "paper-profile run missing", "quick run: 90%"))
    assert (ev.verdict, ev.ours, ev.evidence, ev.note, ev.fidelity) == (
        "not_run", None, "paper-profile run missing", "quick run: 90%", None)


def test_the_rules_text_states_the_constants():
    text = verdicts.rules_markdown()
    assert f"{verdicts.CONFIDENCE:.0%}" in text and f"{verdicts.DECISIVE_SDS:g} ×" in text
    assert f"{verdicts.GAIN_MARGIN_FRACTION:g} × |g|" in text and "planned" in text and "check" in text
    assert "inconclusive" in text and "paired" in text and "substitute" in text and "context" in text


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
    dict(kind="training", values=(1.0,), record_ids=("a",), comparisons=(("x", (1.0,)),)),
    dict(kind="statement", values=(True,), rule="r", comparisons=(("x", ("1.0",)),)),
    dict(kind="statement", values=(True,), rule="r", quantifier="some"),
    dict(kind="statement", values=(True,), rule="r", comparisons=(("x", (1.0,)),), quantifier="most"),
])
def test_malformed_measurements_rejected(bad):
    with pytest.raises(ValueError):
        Measurement(ID, **bad)


@pytest.mark.parametrize("field, value", [("verdict", "probably"), ("verdict", "trend"), ("fidelity", "roughly"),
                                          ("category", "baseline")])
def test_unknown_vocabulary_rejected(field, value):
    kw = {"verdict": "not_run", field: value}
    with pytest.raises(ValueError, match=f"{field} must be one of"):
        verdicts.Evidence("gdp.x", **kw)


def test_scoreboard_rows_carry_basis_fidelity_and_note(tmp_path):
    from dpnotes.report import basis, scoreboard
    from dpnotes.results import Store

    rows = scoreboard(store=Store(tmp_path), paper="labeldp")
    keys = {"verdict", "category", "seeds", "paired", "fidelity", "substitute", "note", "interval", "margin"}
    assert all(keys <= set(r) for r in rows)
    quoted = [r for r in rows if r["category"] == "quoted"]
    assert quoted and all(r["verdict"] == "not_run" for r in quoted)
    assert basis({"seeds": 3, "paired": True, "fidelity": "paper"}) == "3 seeds, paired"
    assert basis({"seeds": None, "paired": None, "fidelity": "paper"}) == "computed"


def test_per_seed_notes_join_seeds_that_say_the_same():
    assert measurement.per_seed([(2, "14 epochs"), (0, "14 epochs"), (1, "14 epochs")]) == "seeds 0-2: 14 epochs"
    assert measurement.per_seed([(0, "a"), (1, "b"), (2, "a")]) == "seeds 0, 2: a; seed 1: b"
    assert measurement.per_seed([(0, "a"), (1, "a")]) == "seeds 0, 1: a"
    assert measurement.per_seed([(3, "x")]) == "seed 3: x"


@settings(max_examples=50, deadline=None)
@given(st.dictionaries(st.integers(0, 9), st.sampled_from(["a", "b", "c"]), min_size=1))
def test_per_seed_notes_keep_every_seed_once_with_its_note(notes):
    text = measurement.per_seed(notes.items())
    found = {}
    for part in text.split("; "):
        head, note = part.split(": ", 1)
        words = head.removeprefix("seeds ").removeprefix("seed ")
        if "-" in words:
            lo, hi = map(int, words.split("-"))
            seeds = range(lo, hi + 1)
        else:
            seeds = [int(w) for w in words.split(", ")]
        for s in seeds:
            assert s not in found
            found[s] = note
    assert found == notes
