"""The README's quick start: the first section, under 40 lines, and what it shows runs as it stands
(the Python example, verbatim, in a subprocess; the ``dpnotes epsilon`` output is what the command prints)."""

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"


def quick_start() -> str:
    text = README.read_text(encoding="utf-8")
    found = re.search(r"^## Quick start\n(.*?)(?=^## )", text, re.S | re.M)
    assert found, "the README has no Quick start section"
    return found.group(0)


def test_the_quick_start_is_the_first_section_and_short():
    text = README.read_text(encoding="utf-8")
    assert re.findall(r"^## .*", text, re.M)[0] == "## Quick start"
    assert len(quick_start().rstrip("\n").splitlines()) < 40


def test_the_epsilon_call_prints_what_the_quick_start_shows():
    block = re.search(r"<!-- quickstart -->\n```text\n\$ (.*?)\n(.*?)\n```\n<!-- /quickstart -->", quick_start(), re.S)
    assert block, "no <!-- quickstart --> block with a command and its output"
    command, shown = block.groups()
    argv = shlex.split(command)
    assert argv[0] == "dpnotes"
    out = subprocess.run([sys.executable, "-m", "dpnotes", *argv[1:]], capture_output=True, text=True, check=True)
    assert out.stdout.rstrip("\n") == shown


@pytest.mark.mirror
@pytest.mark.skipif(not os.environ.get("DPNOTES_DATA_MIRROR"), reason="set DPNOTES_DATA_MIRROR to the dataset mirror")
def test_the_python_example_runs_verbatim(tmp_path):
    code = re.search(r"```python\n(.*?)```", quick_start(), re.S)
    assert code, "no Python example in the quick start"
    script = tmp_path / "quickstart.py"
    script.write_text(code.group(1))
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=900)
    assert out.returncode == 0, out.stderr[-2000:]
    acc, eps = re.fullmatch(r"test accuracy (\S+) at \(eps, delta\) = \((\S+), 1e-5\)\n", out.stdout).groups()
    assert 0.5 < float(acc) <= 1 and 0 < float(eps) < 2  # it learns, privately
