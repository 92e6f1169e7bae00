"""`pip install .` outside the Makefile: the wheel built from the source tree holds the package and
its data (claims registry, seeds plan), installs into a fresh virtual environment, and its
`dpnotes` command answers from there, not from this checkout.

Offline, as CI is: the wheel is built without build isolation (setuptools of this environment),
the fresh environment is made without pip (this environment's pip installs into it with
``--python``, ``--no-deps --no-index``), and it finds the dependencies (torch, numpy, ...) through a
``.pth`` line naming this environment's site-packages, whose own ``.pth`` files (the editable
install of this checkout among them) are not processed from there.
"""

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DATA = ["dpnotes/claims/dpis.toml", "dpnotes/claims/dplis.toml", "dpnotes/claims/gdp.toml",
        "dpnotes/claims/labeldp.toml", "dpnotes/claims/sadpsgd.toml", "dpnotes/experiments/plan.toml"]
EPSILON = ["epsilon", "--batch-size", "256", "--dataset-size", "60000", "--epochs", "15",
           "--noise-multiplier", "1.1", "--delta", "1e-5"]


def _tracked(root: Path, into: Path) -> None:
    """A copy of the files that `pip install .` reads (no build outputs, caches or records)."""
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(root / name, into / name)
    shutil.copytree(root / "dpnotes", into / "dpnotes", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("wheel")
    src, dist, venv = tmp / "src", tmp / "dist", tmp / "venv"
    src.mkdir()
    _tracked(REPO, src)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PIP_REQUIRE_VIRTUALENV")}
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--no-input"]
    subprocess.run([*pip, "wheel", str(src), "--no-deps", "--no-build-isolation", "--no-index", "-w", str(dist)],
                   check=True, capture_output=True, env=env, cwd=tmp, timeout=600)
    (wheel,) = dist.glob("dpnotes-*.whl")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             check=True, capture_output=True, text=True).stdout.strip()
    Path(purelib, "deps-from-the-project-environment.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([*pip, "--python", str(python), "install", "--no-deps", "--no-index", str(wheel)],
                   check=True, capture_output=True, env=env, cwd=tmp, timeout=600)
    return wheel, venv, Path(purelib), env


def test_the_wheel_holds_the_package_and_its_data(installed):
    wheel = installed[0]
    names = set(zipfile.ZipFile(wheel).namelist())
    assert set(DATA) <= names, sorted(set(DATA) - names)
    source = {p.relative_to(REPO).as_posix() for p in (REPO / "dpnotes").rglob("*.py")}
    assert source <= names, sorted(source - names)[:10]
    assert any(n.endswith(".dist-info/entry_points.txt") for n in names)


def test_the_installed_wheel_is_imported_and_its_dpnotes_epsilon_answers(installed, tmp_path):
    _, venv, purelib, env = installed
    out = subprocess.run([str(venv / "bin" / "python"), "-c", "import dpnotes; print(dpnotes.__file__)"],
                         capture_output=True, text=True, env=env, cwd=tmp_path, check=True)
    assert Path(out.stdout.strip()).is_relative_to(purelib), out.stdout  # the wheel's copy, not this checkout
    ours = subprocess.run([sys.executable, "-m", "dpnotes", *EPSILON], capture_output=True, text=True, check=True,
                          cwd=REPO)
    theirs = subprocess.run([str(venv / "bin" / "dpnotes"), *EPSILON], capture_output=True, text=True, env=env,
                            cwd=tmp_path, timeout=300)
    assert theirs.returncode == 0, theirs.stderr[-2000:]
    assert theirs.stdout == ours.stdout


def test_the_installed_wheel_reads_its_package_data(installed, tmp_path):
    """The claims registry and the seeds plan, read from the installed package's files."""
    _, venv, purelib, env = installed
    code = ("from dpnotes import claims\nfrom dpnotes.experiments import plan\n"
            "print(len(claims.load()), len(plan.load().rows))\n"
            "print(plan._path())")
    out = subprocess.run([str(venv / "bin" / "python"), "-c", code], capture_output=True, text=True, env=env,
                         cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    claims, rows, where = out.stdout.split()
    assert int(claims) > 0 and int(rows) > 0 and Path(where).is_relative_to(purelib)
