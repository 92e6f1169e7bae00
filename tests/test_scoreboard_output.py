"""What `dpnotes scoreboard` says: progress on stderr while it computes (a cold cache, a fresh
machine) and nothing on a hit; a text table with a grand total, each not-run claim's reason and no
value cut short."""

from __future__ import annotations

import json
import re
from pathlib import Path

from dpnotes.cli import main

REPO = Path(__file__).resolve().parents[1]


def test_a_cold_scoreboard_says_what_it_is_doing_and_a_hit_says_nothing(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("DPNOTES_SCOREBOARD_CACHE", str(tmp_path / "cache"))  # cold: no output, no calc values
    store = tmp_path / "store"
    store.mkdir()
    assert main(["scoreboard", "--paper", "gdp", "--results", str(store)]) == 0
    cold = capsys.readouterr()
    committed = len(list((REPO / "results" / "gdp").glob("*/*.json")))  # they price the runs not yet made
    lines = cold.err.splitlines()
    assert lines[0] == f"dpnotes scoreboard: verifying the record files ({committed} file(s)) ..."
    assert re.fullmatch(r"dpnotes scoreboard: verifying the record files: done in [\d.]+ s", lines[1])
    assert lines[2] == "dpnotes scoreboard: judging the claims (1 paper(s)) ..."
    assert re.fullmatch(r"dpnotes scoreboard: judging the claims: done in [\d.]+ s", lines[3])
    assert re.fullmatch(r"dpnotes scoreboard: computed in [\d.]+ s; kept in its cache for the next call "
                        r"\(dpnotes.scoreboard_cache\)", lines[4]) and len(lines) == 5
    assert main(["scoreboard", "--paper", "gdp", "--results", str(store)]) == 0
    warm = capsys.readouterr()
    assert warm.out == cold.out and warm.err == ""


def test_the_table_has_a_grand_total_every_not_run_reason_and_every_value_whole(capsys):
    store = str(REPO / "results")
    assert main(["scoreboard", "--results", store]) == 0
    text = capsys.readouterr().out
    assert main(["scoreboard", "--json", "--results", store]) == 0
    out = json.loads(capsys.readouterr().out)
    lines = text.splitlines()
    for row in out["claims"]:
        (line,) = [n for n, line in enumerate(lines) if line.startswith(f"  {row['id']} ")]
        if isinstance(row["ours"], str) and len(row["ours"]) > 10:
            assert lines[line + 1] == f"      ours: {row['ours']}", row["id"]  # whole, on its own line
        elif row["verdict"] == "not_run" and row["ours"] is None:
            assert lines[line].endswith(f" {row['evidence']}"), row["id"]  # why it is not run
    total = out["totals"]
    summed = lambda fid, v: sum(t[fid][v] for t in total.values())  # noqa: E731
    measured = sum(summed(fid, v) for fid in ("paper", "substitute") for v in total["gdp"][fid])
    assert lines[-1] == (
        f"all {len(total)} papers: {measured} claims measured; "
        f"paper settings: {summed('paper', 'reproduced')} reproduced, "
        f"{summed('paper', 'not_reproduced')} not_reproduced, {summed('paper', 'inconclusive')} inconclusive; "
        f"substitute settings: {summed('substitute', 'reproduced')} reproduced, "
        f"{summed('substitute', 'not_reproduced')} not_reproduced, {summed('substitute', 'inconclusive')} "
        f"inconclusive; {sum(t['not_run'] for t in total.values())} not run (each row above says why); checks and "
        f"context (not counted): " + ", ".join(f"{sum(t['context'][c] for t in total.values())} {c}"
                                               for c in total["gdp"]["context"]))
