"""dpnotes.bench and the ``dpnotes bench`` command."""

import json

import pytest

from dpnotes.bench import bench, format_table
from dpnotes.cli import main

KEYS = {"model", "batch_size", "device", "dp_samples_per_s", "nonprivate_samples_per_s",
        "opacus_samples_per_s"}


def test_bench_reports_positive_throughputs():
    rows = bench(["dplis-mlp-mnist"], batch_size=8, steps=2)
    assert len(rows) == 1 and set(rows[0]) == KEYS
    r = rows[0]
    assert r["model"] == "dplis-mlp-mnist" and r["batch_size"] == 8 and r["device"] == "cpu"
    assert all(r[k] > 0 for k in KEYS if k.endswith("_per_s"))
    table = format_table(rows)
    assert "dplis-mlp-mnist" in table and "dp vs opacus" in table


def test_bench_cli_json(capsys):
    assert main(["bench", "--json", "--models", "gdp-adult", "--batch-size", "4", "--steps", "1",
                 "--threads", "1"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [r["model"] for r in out["results"]] == ["gdp-adult"]
    assert set(out["results"][0]) == KEYS


@pytest.mark.parametrize("argv, match", [
    (["--models", "no-such-model"], "model"),
    (["--steps", "0"], "steps"),
    (["--batch-size", "0"], "batch_size"),
    (["--threads", "0"], "threads"),
    (["--device", "tpu"], "device"),
])
def test_bench_cli_invalid(argv, match, capsys):
    assert main(["bench", *argv]) == 2
    assert match in capsys.readouterr().err
