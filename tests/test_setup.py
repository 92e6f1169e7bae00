"""The two-command set-up, CI entry point, environment files and book configuration."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from importlib.metadata import entry_points
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from dpnotes.claims import PAPERS

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def pins(lines) -> dict[str, str]:
    """``name==version`` lines (comments, options and blanks skipped), keyed by canonical name."""
    out = {}
    for line in lines:
        line = line.split("#", 1)[0].strip()
        if "==" in line and not line.startswith("-"):
            name, version = line.split("==", 1)
            out[canonicalize_name(name)] = version.strip()
    return out


def constraints() -> dict[str, str]:
    return pins((REPO / "constraints.txt").read_text().splitlines())


def conda_pip_section() -> list[str]:
    env = yaml.safe_load((REPO / "environment.yml").read_text())
    sections = [d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d]
    assert len(sections) == 1, "environment.yml needs exactly one pip: section"
    return sections[0]


def direct_requirements() -> list[Requirement]:
    """pyproject's dependencies plus those of the ``dev`` extra, self-references expanded."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    reqs, todo, seen = [Requirement(r) for r in project["dependencies"]], ["dev"], set()
    while todo:
        extra = todo.pop()
        seen.add(extra)
        for req in map(Requirement, extras[extra]):
            if canonicalize_name(req.name) == canonicalize_name(project["name"]):
                todo += [e for e in req.extras if e not in seen]
            else:
                reqs.append(req)
    return reqs


def test_pins_parser_reads_names_and_versions():
    assert pins(["# c", "Foo_Bar==1.2  # x", "--extra-index-url u", "-e .[dev]", "baz>=1"]) == {"foo-bar": "1.2"}


def test_environment_yml_agrees_with_constraints():
    env, cons = pins(conda_pip_section()), constraints()
    assert env, "environment.yml pins nothing"
    differ = {n: (v, cons.get(n)) for n, v in env.items() if cons.get(n) != v}
    assert not differ, f"environment.yml vs constraints.txt (name: (env, constraints)): {differ}"


def test_direct_dependencies_pinned_in_both_files_within_pyproject_ranges():
    env, cons = pins(conda_pip_section()), constraints()
    for req in direct_requirements():
        name = canonicalize_name(req.name)
        assert name in cons, f"{name} is a direct dependency but not pinned in constraints.txt"
        assert name in env, f"{name} is a direct dependency but not listed in environment.yml"
        assert req.specifier.contains(Version(cons[name]), prereleases=True), (
            f"constraints.txt pins {name}=={cons[name]}, outside pyproject's {req}")


def test_environment_yml_installs_the_project_and_cpu_torch():
    section = conda_pip_section()
    assert any(line.replace(" ", "").startswith("-e.[dev]") for line in section)
    assert any(line.startswith("--extra-index-url") and "/cpu" in line for line in section)


def test_jupyter_book_is_pinned_below_2():
    assert Version(constraints()["jupyter-book"]) < Version("2")


def test_console_script_declared_and_installed():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert project["scripts"]["dpnotes"] == "dpnotes.cli:main"
    (ep,) = [e for e in entry_points(group="console_scripts") if e.name == "dpnotes"]
    from dpnotes.cli import main

    assert ep.load() is main
    out = subprocess.run([str(BIN / "dpnotes"), "--help"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "usage: dpnotes" in out.stdout


# --- Makefile: inspected with `make -n` in a scratch copy, so nothing is installed -----------

@pytest.fixture
def scratch(tmp_path):
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    for name in ("Makefile", "pyproject.toml", "constraints.txt"):
        shutil.copy(REPO / name, tmp_path / name)
    return tmp_path


def make_n(cwd: Path, *targets: str) -> list[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    out = subprocess.run(["make", "-n", "--no-print-directory", *targets], cwd=cwd, env=env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return [line for line in out.stdout.splitlines() if line.strip()]


def test_setup_creates_venv_then_torch_then_project(scratch):
    lines = make_n(scratch, "setup")
    venv = next(i for i, l in enumerate(lines) if "-m venv .venv" in l)
    torch = next(i for i, l in enumerate(lines) if "pip install" in l and "^torch==" in l)
    project = next(i for i, l in enumerate(lines) if "pip install -c constraints.txt -e \".[dev]\"" in l)
    assert venv < torch < project
    # the torch requirement the recipe greps is the exact pin
    (torch_pin,) = [l for l in (scratch / "constraints.txt").read_text().splitlines() if l.startswith("torch==")]
    assert torch_pin == f"torch=={constraints()['torch']}"


def _torch_lines(lines: list[str]) -> tuple[str, str, str]:
    """The torch install, the project install and the constraints-writing sed of `make -n setup`."""
    (torch,) = [l for l in lines if "pip install" in l and "torch==" in l and "-e" not in l.split()]
    (project,) = [l for l in lines if "pip install" in l and '-e ".[dev]"' in l]
    sed = [l for l in lines if l.startswith("sed ")]
    return torch, project, sed[0] if sed else ""


def test_setup_torch_cuda_installs_a_cuda_build_of_the_pinned_version(scratch):
    """`make setup TORCH=cuda`: torch==X (PyPI's CUDA build) where constraints.txt pins X+cpu, from
    constraints.txt with only torch's pin swapped, used by both installs; a CPU build in the way is
    removed first and the result is checked to be a CUDA build."""
    version = constraints()["torch"].split("+")[0]
    lines = make_n(scratch, "setup", "TORCH=cuda")
    torch, project, sed = _torch_lines(lines)
    assert torch.endswith(f'-c .venv/constraints-cuda.txt "torch=={version}"') and "download.pytorch.org" not in torch
    assert '-c .venv/constraints-cuda.txt -e ".[dev]"' in project
    (scratch / ".venv").mkdir()
    subprocess.run(["bash", "-c", sed], cwd=scratch, check=True)
    swapped = (scratch / ".venv/constraints-cuda.txt").read_text().splitlines()
    original = (scratch / "constraints.txt").read_text().splitlines()
    changed = [(a, b) for a, b in zip(original, swapped) if a != b]
    assert changed == [(f"torch=={constraints()['torch']}", f"torch=={version}")]
    text = "\n".join(lines)
    assert "pip uninstall -y torch" in text and 'sys.exit(torch.version.cuda is None and "not a CUDA build")' in text
    assert text.index("pip uninstall") < text.index(torch) < text.index("not a CUDA build")
    assert lines[-3] == "echo cuda > .venv/.torch"


def test_setup_torch_cu_variant_comes_from_its_pytorch_index(scratch):
    version = constraints()["torch"].split("+")[0]
    torch, project, sed = _torch_lines(make_n(scratch, "setup", "TORCH=cu126"))
    assert "--extra-index-url https://download.pytorch.org/whl/cu126 -c .venv/constraints-cu126.txt" in torch
    assert torch.endswith(f'"torch=={version}+cu126"') and sed.endswith("> .venv/constraints-cu126.txt")


def test_setup_torch_choice_is_stamped_remembered_and_checked(scratch):
    stamp = {t: [l.split()[-1] for l in make_n(scratch, "setup", f"TORCH={t}") if l.startswith("touch ")][0]
             for t in ("cpu", "cuda", "cu126")}
    assert len(set(stamp.values())) == 3  # switching builds redoes the set-up
    (scratch / ".venv").mkdir()
    (scratch / ".venv/.torch").write_text("cuda\n")  # what `make setup TORCH=cuda` leaves
    (scratch / stamp["cuda"]).touch()
    assert not any("pip install" in l for l in make_n(scratch, "setup")), "a later make would reinstall torch"
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    out = subprocess.run(["make", "-n", "setup", "TORCH=rocm"], cwd=scratch, env=env, capture_output=True, text=True)
    assert out.returncode != 0 and "TORCH must be cpu, cuda or a CUDA variant" in out.stderr and "'rocm'" in out.stderr


def test_setup_is_stamped_on_pyproject_and_constraints(scratch):
    (stamp,) = [l.split()[-1] for l in make_n(scratch, "setup") if l.startswith("touch ")]
    (scratch / stamp).parent.mkdir(parents=True)
    (scratch / stamp).touch()
    assert not any("pip install" in l for l in make_n(scratch, "setup")), "set-up repeated despite its stamp"
    assert make_n(scratch, "test")[-1].split()[0].endswith("pytest")
    with open(scratch / "constraints.txt", "a") as fh:
        fh.write("# changed\n")
    lines = make_n(scratch, "setup")
    assert any("pip install" in l for l in lines), "set-up not repeated after constraints.txt changed"
    assert not any(l == f"touch {stamp}" for l in lines)


def test_make_test_runs_ruff_then_pytest_with_nbval_on_two_workers(scratch):
    (stamp,) = [l.split()[-1] for l in make_n(scratch, "setup") if l.startswith("touch ")]
    (scratch / stamp).parent.mkdir(parents=True)
    (scratch / stamp).touch()
    lint, line = make_n(scratch, "test")
    assert lint.split()[-2:] == ["check", "."] and lint.split()[0].endswith("ruff")  # the linter first
    args = line.split()
    assert {"--nbval-lax", "--nbval-current-env", "--dist", "loadfile"} <= set(args)
    assert args[args.index("-n") + 1] == "2"


def test_make_book_executes_every_paper_notebook_then_builds_strictly(scratch):
    (stamp,) = [l.split()[-1] for l in make_n(scratch, "setup") if l.startswith("touch ")]
    (scratch / stamp).parent.mkdir(parents=True)
    (scratch / stamp).touch()
    text = "\n".join(make_n(scratch, "book"))
    run = re.search(r"book/execute\.py book/executed ((?:notebooks/\w+\.ipynb )+)\\?\s*((?:notebooks/\w+\.ipynb )*)"
                    r"book/scoreboard\.ipynb", text)
    executed = tuple(p[len("notebooks/"):-len(".ipynb")] for p in (run.group(1) + run.group(2)).split()) if run else ()
    assert executed == (*PAPERS, "audit", "compare")  # every paper's chapter, the audits, the comparison
    assert "-p profile quick" in text
    assert "jupyter-book build . -W --keep-going" in text
    assert text.index("book/execute.py") < text.index("jupyter-book build")


def test_gitignore_covers_build_outputs():
    for path in ("book/executed/gdp.ipynb", "_build/html/index.html", "build/mathjax/x.js", ".venv/bin/python"):
        out = subprocess.run(["git", "check-ignore", "-q", path], cwd=REPO)
        assert out.returncode == 0, f"{path} is not ignored by git"


# --- CI entry point ---------------------------------------------------------------------------

def run_ci(tmp_path, env_extra: dict[str, str]) -> list[str]:
    """Run .ci/run with a fake `make` that prints the mirror it was given and its arguments."""
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "make").write_text('#!/bin/sh\necho "$DPNOTES_DATA_MIRROR"\necho "$@"\n')
    (fake / "make").chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k != "DPNOTES_DATA_MIRROR"}
    env.update(PATH=f"{fake}:{env['PATH']}", **env_extra)
    out = subprocess.run([str(REPO / ".ci" / "run")], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout.splitlines()


def test_ci_run_defaults_mirror_beside_the_repository(tmp_path):
    mirror = str(REPO.parent / "shared" / "data")
    assert run_ci(tmp_path, {}) == [mirror, "book", mirror, "test"]  # the book first: the browser test opens it


def test_ci_run_keeps_a_mirror_already_set(tmp_path):
    assert run_ci(tmp_path, {"DPNOTES_DATA_MIRROR": "/elsewhere"}) == ["/elsewhere", "book", "/elsewhere", "test"]


def test_ci_run_is_strict_bash():
    script = REPO / ".ci" / "run"
    assert os.access(script, os.X_OK)
    lines = script.read_text().splitlines()
    assert lines[0] == "#!/usr/bin/env bash" and "set -euo pipefail" in lines


# --- README -----------------------------------------------------------------------------------

def section(markdown: str, title: str) -> str:
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", markdown, re.M | re.S)
    assert match, f"README has no '## {title}' section"
    return match.group(1)


def test_readme_gives_exactly_two_setup_commands():
    setup = section((REPO / "README.md").read_text(), "Set-up")
    blocks = re.findall(r"```(?:bash|sh)?\n(.*?)```", setup, re.S)
    commands = [l.split("#", 1)[0].strip() for b in blocks for l in b.splitlines()]
    assert [c for c in commands if c] == ["make book", "make test"]


def test_readme_documents_cli_mirror_and_performance():
    readme = (REPO / "README.md").read_text()
    for text in ("DPNOTES_DATA_MIRROR", "dpnotes --help", "dpnotes epsilon", "dpnotes run gdp --profile quick",
                 "dpnotes scoreboard", "dpnotes data verify", "dpnotes bench"):
        assert text in readme, f"README does not mention {text!r}"
    assert "docs/performance.md" in section(readme, "Performance")  # the measurements and their history
    performance = (REPO / "docs" / "performance.md").read_text()
    assert "TODO" not in performance
    for column in ("DP samples/s", "non-private samples/s", "opacus samples/s"):
        assert column in performance


# --- Jupyter Book configuration ---------------------------------------------------------------

def toc_files() -> list[str]:
    toc = yaml.safe_load((REPO / "_toc.yml").read_text())
    return [toc["root"]] + [c["file"] for part in toc["parts"] for c in part["chapters"]]


def test_toc_has_one_executed_chapter_per_paper_the_scoreboard_and_the_audits():
    files = toc_files()
    assert [f for f in files if f.startswith("book/executed/")] == (
        ["book/executed/scoreboard"] + [f"book/executed/{p}" for p in PAPERS] + ["book/executed/audit",
                                                                             "book/executed/compare"])
    for paper in PAPERS:
        assert (REPO / "notebooks" / f"{paper}.ipynb").is_file()
    assert (REPO / "book" / "scoreboard.ipynb").is_file()


def test_toc_sources_exist():
    for f in toc_files():
        if not f.startswith("book/executed/"):
            assert (REPO / f"{f}.md").is_file() or (REPO / f"{f}.ipynb").is_file(), f


def test_config_leaves_execution_to_papermill_and_bundles_mathjax():
    config = yaml.safe_load((REPO / "_config.yml").read_text())
    assert config["execute"]["execute_notebooks"] == "off"
    assert config["only_build_toc_files"] is True
    sphinx = config["sphinx"]["config"]
    assert "://" not in sphinx["mathjax_path"] and not sphinx["mathjax_path"].startswith("_static")
    assert sphinx["html_extra_path"] == ["build/mathjax"]
    # the Makefile bundles MathJax where mathjax_path (relative to _static/) points
    mathjax_js = re.search(r"^MATHJAX_JS := (\S+)", (REPO / "Makefile").read_text(), re.M).group(1)
    served = Path(mathjax_js).relative_to("build/mathjax")
    assert Path("_static", sphinx["mathjax_path"]).as_posix() == f"_static/../{served.as_posix()}"
    for bib in config["bibtex_bibfiles"]:
        assert (REPO / bib).is_file()


REQUIRED_REFERENCES = {
    "wang2021dplis", "wei2022dpis", "bu2020deep", "ghazi2021deep", "fu2022sadpsgd",
    "abadi2016deep", "mironov2017renyi", "balle2020hypothesis", "gopi2021numerical",
    "dong2019gaussian", "tramer2021differentially", "chua2024private", "papernot2021tempered",
}


def bib_keys() -> set[str]:
    from pybtex.database import parse_file

    return set(parse_file(str(REPO / "book" / "references.bib")).entries)


def test_bibliography_has_the_papers_and_key_references():
    missing = REQUIRED_REFERENCES - bib_keys()
    assert not missing, f"references.bib lacks {sorted(missing)}"


def test_every_citation_resolves():
    sources = [*REPO.glob("book/*.md"), *REPO.glob("book/*.ipynb"), *REPO.glob("notebooks/*.ipynb")]
    cited = {key.strip() for path in sources
             for keys in re.findall(r"\{cite(?::\w+)?\}`([^`]+)`", path.read_text())
             for key in keys.split(",")}
    assert cited, "nothing is cited"
    assert not cited - bib_keys(), f"cited but not in references.bib: {sorted(cited - bib_keys())}"


def test_cdn_fallback_config_drops_only_the_bundled_mathjax_settings():
    """Without npm, `make book` builds with _config.yml minus these lines (grep -v)."""
    patterns = re.findall(r"-e '(\^[^']+)'", (REPO / "Makefile").read_text())
    lines = (REPO / "_config.yml").read_text().splitlines()
    dropped = [l.split(":")[0].strip() for l in lines if any(re.match(p, l) for p in patterns)]
    assert dropped == ["mathjax_path", "html_extra_path"]


def test_readme_gpu_setup_names_the_pinned_torch_version():
    text = (REPO / "README.md").read_text()
    version = constraints()["torch"].split("+")[0]
    assert "make setup TORCH=cuda" in text and "tests/test_cuda.py" in text
    named = set(re.findall(r"torch==(\d[\w.+]*)", section(text, "GPU set-up")))
    assert named == {version, f"{version}+cu126"}, named
