"""The cost of stored runs (dpnotes.report.cost, ``dpnotes cost``) on small fabricated records."""

import json
from pathlib import Path

import pytest

from dpnotes.cli import main
from dpnotes.report.cost import costs, markdown, record_cost, segment_cost


def _record(rid, paper="gdp", profile="paper", seed=0, segments=((3600.0, "cpu: x86_64, 1 threads"),)):
    return {"id": rid, "spec": {"paper": paper, "profile": profile, "seed": seed},
            "provenance": {"segments": [{"wall_s": w, "device": d} for w, d in segments]}}


def _claim(cid, evidence, paper="gdp", verdict="reproduced"):
    return {"id": cid, "paper": paper, "verdict": verdict, "evidence": evidence}


def test_a_cpu_segment_costs_its_wall_time_times_its_threads():
    assert segment_cost({"wall_s": 1800, "device": "cpu: Intel(R) Xeon(R), 2.2GHz, 4 threads"}, "r") == {
        "cpu_core_h": 2.0, "cpu_wall_h": 0.5, "gpu_h": 0.0}
    assert segment_cost({"wall_s": 7200, "device": "cuda: NVIDIA H100 80GB HBM3"}, "r") == {
        "cpu_core_h": 0.0, "cpu_wall_h": 0.0, "gpu_h": 2.0}


def test_a_resumed_record_sums_its_segments_by_device():
    r = _record("a", segments=((3600, "cpu: x86_64, 2 threads"), (1800, "cuda: NVIDIA H100"),
                               (900, "cpu: arm, 1 threads")))
    assert record_cost(r) == {"runs": 1, "cpu_core_h": 2.25, "cpu_wall_h": 1.25, "gpu_h": 0.5}


@pytest.mark.parametrize("segment, message", [
    ({"wall_s": 10, "device": "tpu: v4"}, "device must be 'cpu: <machine>, <n> threads' or 'cuda: <name>'"),
    ({"wall_s": 10, "device": "cpu: x86_64"}, "device must be"),
    ({"wall_s": 10, "device": "cpu: x86_64, 0 threads"}, "names 0 threads"),
    ({"wall_s": -1.0, "device": "cpu: x86_64, 1 threads"}, "wall_s must be a finite number >= 0"),
    ({"wall_s": float("inf"), "device": "cpu: x86_64, 1 threads"}, "wall_s must be"),
    ({"wall_s": "10", "device": "cpu: x86_64, 1 threads"}, "wall_s must be"),
    ({"device": "cpu: x86_64, 1 threads"}, "wall_s must be"),
])
def test_bad_segments_are_one_line_errors_naming_the_record(segment, message):
    with pytest.raises(ValueError, match=message) as err:
        record_cost({"id": "abc123", "provenance": {"segments": [segment]}})
    assert str(err.value).startswith("record abc123: ")


def test_a_record_without_segments_or_spec_is_refused():
    with pytest.raises(ValueError, match="record x: provenance.segments must be a non-empty list"):
        record_cost({"id": "x", "provenance": {"segments": []}})
    with pytest.raises(ValueError, match="record y: spec must name its paper, profile"):
        costs([{**_record("y"), "spec": {"paper": "gdp", "profile": "paper", "seed": "0"}}])
    with pytest.raises(ValueError, match="record z appears twice"):
        costs([_record("z"), _record("z")])


def test_tables_per_profile_and_seed():
    records = [_record("a"), _record("b", seed=1, segments=((7200, "cpu: x86_64, 2 threads"),)),
               _record("c", profile="quick", segments=((360, "cpu: x86_64, 1 threads"),)),
               _record("d", paper="dpis", segments=((3600, "cuda: H100"),))]
    t = costs(records)
    assert t["by_profile"] == [
        {"paper": "dpis", "profile": "paper", "runs": 1, "cpu_core_h": 0.0, "cpu_wall_h": 0.0, "gpu_h": 1.0},
        {"paper": "gdp", "profile": "paper", "runs": 2, "cpu_core_h": 5.0, "cpu_wall_h": 3.0, "gpu_h": 0.0},
        {"paper": "gdp", "profile": "quick", "runs": 1, "cpu_core_h": 0.1, "cpu_wall_h": 0.1, "gpu_h": 0.0}]
    assert [(r["paper"], r["profile"], r["seed"], r["cpu_core_h"]) for r in t["by_seed"]] == [
        ("dpis", "paper", 0, 0.0), ("gdp", "paper", 0, 1.0), ("gdp", "paper", 1, 4.0), ("gdp", "quick", 0, 0.1)]
    assert t["by_claim"] == [] and t["behind_verdicts"]["runs"] == 0


def test_a_shared_record_counts_in_full_per_claim_and_its_shares_add_up():
    records = [_record("a"), _record("b", segments=((7200, "cpu: x86_64, 1 threads"),)), _record("unused")]
    claims = [_claim("c1", ["a", "b"]), _claim("c2", ["b"]), _claim("c3", ["a", "a"]),
              _claim("not-run", ["unused"], verdict="not_run"), _claim("computed", "computed: by hand")]
    t = costs(records, claims)
    by = {c["claim"]: c for c in t["by_claim"]}
    assert set(by) == {"c1", "c2", "c3"}  # not_run and computed claims rest on no run
    assert by["c1"]["full"]["cpu_core_h"] == 3.0 and by["c1"]["share"]["cpu_core_h"] == pytest.approx(0.5 + 1.0)
    assert by["c2"]["full"]["cpu_core_h"] == 2.0 and by["c2"]["share"]["cpu_core_h"] == pytest.approx(1.0)
    assert by["c3"]["full"]["runs"] == 1 and by["c3"]["share"]["cpu_core_h"] == pytest.approx(0.5)  # a listed twice
    shares = sum(c["share"]["cpu_core_h"] for c in t["by_claim"])
    assert shares == pytest.approx(t["behind_verdicts"]["cpu_core_h"]) and t["behind_verdicts"]["cpu_core_h"] == 3.0
    assert t["behind_verdicts"]["runs"] == 2  # the unused record backs no verdict


def test_evidence_outside_the_store_is_an_error():
    with pytest.raises(ValueError, match="claim c1: evidence record zz is not in the store"):
        costs([_record("a")], [_claim("c1", ["a", "zz"])])


def test_per_paper_each_record_counts_once_and_hours_per_claim_divide_by_claims():
    records = [_record("a"), _record("b", segments=((7200, "cpu: x86_64, 1 threads"),)),
               _record("d", paper="dpis", segments=((3600, "cuda: H100"),)), _record("unused")]
    claims = [_claim("c1", ["a", "b"]), _claim("c2", ["b"]), _claim("c3", ["a"]), _claim("d1", ["d"], "dpis"),
              _claim("d2", ["d"], "dpis"), _claim("not-run", ["unused"], verdict="not_run")]
    t = costs(records, claims)
    assert t["by_paper"] == [
        {"paper": "gdp", "claims": 3, "runs": 2, "cpu_core_h": 3.0, "cpu_wall_h": 3.0, "gpu_h": 0.0},
        {"paper": "dpis", "claims": 2, "runs": 1, "cpu_core_h": 0.0, "cpu_wall_h": 0.0, "gpu_h": 1.0}]
    text = markdown(t)  # per claim: 3.0 / 3 claims; full: c1 3 h, c2 2 h, c3 1 h
    assert "| gdp | 3 | 2 | 3.00 | 0.00 | 1.00 | 0.00 | 2.00 | 3.00 |" in text
    assert "| dpis | 2 | 1 | 0.00 | 1.00 | 0.00 | 0.50 | 0.00 | 0.00 |" in text


def test_markdown_shows_every_row():
    t = costs([_record("a"), _record("b", paper="sadpsgd", seed=1)],
              [_claim("c1", ["a"]), _claim("s1", ["b"], "sadpsgd")])
    text = markdown(t, claims=True)
    assert "| gdp | paper | 1 | 1.00 | 1.00 | 0.00 |" in text and "| sadpsgd | paper | 1 | 1 | 1.00 | 0.00 |" in text
    assert "| c1 | reproduced | 1 | 1.00 | 1.00 | 0.00 | 0.00 |" in text
    assert "| c1 |" not in markdown(t)


def test_cli_reads_a_store_without_the_scoreboard(tmp_path, capsys):
    # committed records, one per profile (the store verifies what it reads: made-up ones are excluded)
    import shutil

    repo = Path(__file__).resolve().parents[1]
    expected = 0.0
    for profile in ("paper", "quick"):
        source = sorted((repo / "results" / "gdp" / profile).glob("*.json"))[0]
        (tmp_path / "gdp" / profile).mkdir(parents=True)
        for suffix in (".json", ".sha256"):
            shutil.copy(source.with_suffix(suffix), tmp_path / "gdp" / profile)
        if profile == "paper":
            segments = json.loads(source.read_text())["provenance"]["segments"]
            expected = sum(segment_cost(s, "r")["cpu_core_h"] for s in segments)
    assert main(["cost", "--results", str(tmp_path), "--no-claims", "--json", "--profile", "paper"]) == 0
    out = json.loads(capsys.readouterr().out)
    by_profile = [(r["profile"], r["cpu_core_h"]) for r in out["by_profile"]]
    assert by_profile == [("paper", pytest.approx(expected, abs=0.01))]
    assert main(["cost", "--results", str(tmp_path), "--claims", "--no-claims"]) == 2
    assert "exclude each other" in capsys.readouterr().err
