"""Paths that train nothing import no torch (and no pandas): checked in a fresh interpreter.

``dpnotes scoreboard`` imports torch only when :mod:`dpnotes.calc_cache` lacks a value it needs
(a new code version): :func:`dpnotes.spec.resolve` (the model, method and train registries a run
config's spec id is made from) and LabelDP's exact claims (:mod:`dpnotes.experiments.labeldp.privacy`
prices RR and RRWithPrior on torch tensors, :mod:`dpnotes.mechanisms`) compute with it. With those
values stored, ``--no-cache`` imports none (below), and an output cache hit imports none:
tests/test_scoreboard_cache.py. The other paths below must not.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

_CHECK = "import sys; {body}; print(sorted(m for m in ('torch', 'pandas') if m in sys.modules))"


REPO = Path(__file__).resolve().parents[1]


def _heavy_imports(body: str) -> list[str]:
    out = subprocess.run([sys.executable, "-c", _CHECK.format(body=body)], capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1].replace("'", '"'))


@pytest.mark.parametrize("module", ["dpnotes.data", "dpnotes.report", "dpnotes.report.cost",
                                    "dpnotes.experiments.dplis", "dpnotes.accounting.calibrate", "dpnotes.cli"])
def test_importing_a_non_training_module_imports_no_torch(module):
    assert _heavy_imports(f"import {module}") == []


def test_cost_without_claims_imports_no_torch(tmp_path):
    # a committed record (the store verifies what it reads: a made-up one would be excluded)
    import shutil

    source = sorted((REPO / "results" / "gdp" / "paper").glob("*.json"))[0]
    (tmp_path / "gdp" / "paper").mkdir(parents=True)
    for suffix in (".json", ".sha256"):
        shutil.copy(source.with_suffix(suffix), tmp_path / "gdp" / "paper")
    body = ("from dpnotes.cli import main; import contextlib, io; "
            f"f = io.StringIO(); c = contextlib.redirect_stdout(f); c.__enter__(); "
            f"assert main(['cost', '--no-claims', '--results', {str(tmp_path)!r}]) == 0; c.__exit__(None, None, None); "
            "assert '| gdp | paper | 1 |' in f.getvalue()")
    assert _heavy_imports(body) == []


_SCOREBOARD = """import contextlib, io, json, runpy, sys
sys.argv = ["dpnotes", "scoreboard", "--json", "--no-cache", "--results", sys.argv[1]]
out = io.StringIO()
with contextlib.redirect_stdout(out):
    try:
        runpy.run_module("dpnotes", run_name="__main__")
    except SystemExit as e:
        assert e.code in (0, None), e.code
print(json.dumps({"output": out.getvalue(), "heavy": sorted(m for m in ("torch", "pandas") if m in sys.modules)}))
"""


def test_scoreboard_without_its_output_cache_imports_no_torch_once_calc_cache_holds_its_values(tmp_path):
    # the same script both times: the calc cache's code version includes sys.path
    script = tmp_path / "scoreboard.py"
    script.write_text(_SCOREBOARD)
    env = {**os.environ, "DPNOTES_SCOREBOARD_CACHE": str(tmp_path / "cache"), "PYTHONPATH": str(REPO)}
    runs = [json.loads(subprocess.run([sys.executable, str(script), str(REPO / "results")], capture_output=True,
                                      text=True, check=True, env=env, cwd=REPO).stdout) for _ in range(2)]
    assert list((tmp_path / "cache" / "calc").glob("*.pickle"))
    assert runs[1]["output"] == runs[0]["output"] and '"claims"' in runs[0]["output"]
    assert runs[1]["heavy"] == []
