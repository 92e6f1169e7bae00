"""dpnotes.bench and the ``dpnotes bench`` command."""

import json
import subprocess
import sys

import pytest

from dpnotes import bench as bench_module
from dpnotes.bench import METHODS, bench, format_table, paper_batch_size
from dpnotes.cli import bench as cli_bench
from dpnotes.cli import main

ROW = {"model", "batch_size", "device", "threads", "load_avg", "methods"}
MEASURES = {"samples_per_s", "step_ms", "peak_mb", "layout"}


def test_bench_reports_every_method():
    rows = bench(["dplis-mlp-mnist"], batch_size=8, steps=2, methods=METHODS, dplis_k=2)
    assert len(rows) == 1 and set(rows[0]) == ROW
    r = rows[0]
    assert r["model"] == "dplis-mlp-mnist" and r["batch_size"] == 8 and r["device"] == "cpu"
    assert list(r["methods"]) == list(METHODS)
    for m, v in r["methods"].items():
        assert set(v) == MEASURES and v["samples_per_s"] > 0 and v["step_ms"] > 0, m
        assert v["peak_mb"] is None or v["peak_mb"] >= 0
        assert v["layout"] == "default", m  # an MLP: no Conv2d, nothing to relayout
    table = format_table(rows)
    assert "dplis-mlp-mnist" in table and "non-private step" in table and "opacus" in table


def test_opacus_gets_the_engines_channels_last_layout_on_a_convnet(monkeypatch):
    """Opacus is timed channels-last and in the default layout, and the faster is reported."""
    made = []
    real = bench_module._opacus_step

    def spy(name, x, y, device, ghost, channels_last):
        made.append(channels_last)
        return real(name, x, y, device, ghost, channels_last)

    monkeypatch.setattr(bench_module, "_opacus_step", spy)
    r = bench(["tf-mnist-cnn"], batch_size=4, steps=1, methods=["ghost", "opacus", "opacus-ghost"])[0]
    assert sorted(set(made)) == [False, True]
    assert r["methods"]["ghost"]["layout"] == "channels-last"
    assert {r["methods"][m]["layout"] for m in ("opacus", "opacus-ghost")} <= {"channels-last", "default"}
    torch = bench_module.torch
    x, y = bench_module.models.example_batch("tf-mnist-cnn", 2, torch.Generator().manual_seed(0))
    step = bench_module._opacus_step("tf-mnist-cnn", x, y, torch.device("cpu"), False, True)
    step()  # opacus accepts the channels-last model and inputs


def test_peak_memory_sees_a_large_temporary():
    """In a fresh process (a warm heap may serve a temporary without growing the resident set)."""
    code = ("import torch; from dpnotes import bench as b\n"
            "ok = b._malloc_thresholds(1 << 17)\n"
            "print(b._peak_mb(lambda: torch.ones(8 * 2 ** 20).sum(), torch.device('cpu')) if ok else 'skip')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()[-1]
    if out in ("skip", "None"):
        pytest.skip("no glibc mallopt or /proc/self/clear_refs here")
    assert 28 < float(out) < 64  # 32 MiB of float32 ones


def test_paper_batch_sizes_come_from_the_claims():
    from dpnotes import claims

    assert paper_batch_size("dplis-mlp-mnist") == int(claims.setting("dplis.table1.mnist.batch_size"))
    assert paper_batch_size("sadpsgd-cifar-cnn") == int(claims.setting("sadpsgd.table2.cifar10.batch_size"))
    assert paper_batch_size("neumf") is None
    assert bench(["neumf"], batch_size="paper", steps=1) == []  # no printed batch size: skipped


def test_cli_lists_match_the_module():
    assert cli_bench.METHODS == METHODS
    assert cli_bench.DEFAULT_METHODS == bench_module.DEFAULT_METHODS


def test_bench_cli_json(capsys):
    assert main(["bench", "--json", "--models", "gdp-adult", "--batch-size", "4", "--steps", "1",
                 "--threads", "1", "--methods", "ghost", "nonprivate"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [r["model"] for r in out["results"]] == ["gdp-adult"]
    assert set(out["results"][0]) == ROW and list(out["results"][0]["methods"]) == ["ghost", "nonprivate"]
    assert out["results"][0]["threads"] == 1


@pytest.mark.parametrize("argv, match", [
    (["--models", "no-such-model"], "model"),
    (["--steps", "0"], "steps"),
    (["--batch-size", "0"], "batch_size"),
    (["--batch-size", "big"], "batch_size"),
    (["--threads", "0"], "threads"),
    (["--device", "tpu"], "device"),
    (["--methods", "jax"], "methods"),
    (["--dplis-k", "0"], "dplis_k"),
    (["--paper", "--models", "gdp-adult"], "--paper"),
    (["--max-memory", "0"], "max_memory_mb"),
    (["--json", "--markdown"], "--markdown"),
])
def test_bench_cli_invalid(argv, match, capsys):
    assert main(["bench", *argv]) == 2
    assert match in capsys.readouterr().err


def test_bench_cli_names_the_models_it_gives_no_paper_batch_row(capsys):
    assert main(["bench", "--json", "--models", "neumf", "gdp-adult", "dpis-imdb-bilstm", "--batch-size", "paper",
                 "--steps", "1", "--threads", "1", "--methods", "nonprivate"]) == 0
    captured = capsys.readouterr()
    assert [(r["model"], r["batch_size"]) for r in json.loads(captured.out)["results"]] == [
        ("gdp-adult", paper_batch_size("gdp-adult"))]
    assert "no row for neumf, dpis-imdb-bilstm: their papers print no DP-SGD batch size" in captured.err
    assert main(["bench", "--models", "gdp-adult", "--batch-size", "4", "--steps", "1", "--threads", "1",
                 "--methods", "nonprivate"]) == 0
    assert capsys.readouterr().err == ""  # an integer batch skips nothing


def test_bench_skips_per_example_methods_over_the_memory_limit(capsys):
    need = bench_module.per_example_mb("dplis-mlp-mnist", 8)
    n = sum(p.numel() for p in bench_module.models.create("dplis-mlp-mnist").parameters())
    assert need == pytest.approx(8 * n * 4 / 2 ** 20)
    r = bench(["dplis-mlp-mnist"], batch_size=8, steps=1, methods=["ghost", "func", "opacus", "opacus-ghost"],
              max_memory_mb=need * 0.99)[0]["methods"]
    assert "samples_per_s" in r["ghost"] and "samples_per_s" in r["opacus-ghost"]  # no per-example gradients
    for m in ("func", "opacus"):
        assert r[m] == {"skipped": f"not run: its per-example gradients take {need:,.0f} MiB (batch 8), over "
                                   f"max_memory_mb {need * 0.99:,.0f}"}
    r = bench(["dplis-mlp-mnist"], batch_size=8, steps=1, methods=["func"], max_memory_mb=need * 1.01)[0]
    assert "samples_per_s" in r["methods"]["func"]  # at the limit it runs
    assert main(["bench", "--markdown", "--models", "dplis-mlp-mnist", "--batch-size", "8", "--steps", "1",
                 "--threads", "1", "--methods", "ghost", "func", "nonprivate", "opacus-ghost",
                 "--max-memory", str(need * 0.99)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == ("| model | batch | ghost | func | non-private | opacus-ghost | ghost step / non-private | "
                        "ghost / better opacus | peak MiB (ghost / func / non-private / opacus-ghost) | load |")
    cells = [c.strip() for c in lines[2].split("|")[1:-1]]
    assert cells[:2] == ["`dplis-mlp-mnist`", "8"] and cells[3] == "not run"


def test_bench_markdown_ratios():
    row = {"model": "m", "batch_size": 4, "load_avg": 2.04, "methods": {
        "ghost": {"samples_per_s": 300.0, "peak_mb": 1.4}, "nonprivate": {"samples_per_s": 450.0, "peak_mb": None},
        "opacus": {"samples_per_s": 100.0, "peak_mb": 2.0}, "opacus-ghost": {"samples_per_s": 200.0, "peak_mb": 3.0},
        "func": {"error": "ValueError: x"}}}
    lines = bench_module.format_markdown([row]).splitlines()
    assert lines[2] == "| `m` | 4 | 300 | 450 | 100 | 200 | refuses | 1.50x | 1.50x | 1 / - / 2 / 3 / - | 2.0 |"
