"""Verdicts are computed from claims and values, never written by hand."""

import pytest

from dpnotes.claims import Claim
from dpnotes.report import verdicts


def claim(value, kind="exact", tolerance=None):
    return Claim(id="gdp.test.x", source="test", kind=kind, value=value, tolerance=tolerance)


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
    assert verdicts.exact(claim(printed), ours).verdict == verdict


def test_exact_without_paper_value_is_not_run():
    ev = verdicts.exact(claim(None), 1.0)
    assert ev.verdict == "not_run" and "missing" in ev.evidence


def test_training_uses_mean_over_seeds_and_tolerance():
    c = claim("96.6", kind="training", tolerance=1.0)
    ok = verdicts.training(c, [95.9, 96.3, 96.1], ["a", "b", "c"])
    assert ok.verdict == "reproduced" and ok.ours == pytest.approx(96.1)
    assert "3 seed" in ok.detail
    bad = verdicts.training(c, [95.0, 95.4], ["a", "b"])
    assert bad.verdict == "not_reproduced"
    assert verdicts.training(c, [], []).verdict == "not_run"


def test_unknown_verdict_rejected():
    with pytest.raises(ValueError, match="verdict must be one of"):
        verdicts.Evidence("gdp.x", "probably")
