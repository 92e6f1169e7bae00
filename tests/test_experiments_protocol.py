"""Every paper's experiments module meets :class:`dpnotes.experiments.protocol.PaperModule`."""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path

import pytest

from dpnotes import experiments, report
from dpnotes.claims import PAPERS
from dpnotes.experiments.protocol import EXTRAS, HOME, LAYOUT, LINE_CAP, OPTIONAL, PaperModule, StudyModule


def _params(fn) -> dict[str, inspect.Parameter]:
    return dict(inspect.signature(fn).parameters)


def _check_execute(module):
    params = _params(module.execute)
    assert list(params)[0] == "spec"
    for name in ("device", "progress", "checkpoint"):
        assert params[name].kind is inspect.Parameter.KEYWORD_ONLY, f"execute's {name} must be keyword-only"
        assert params[name].default is not inspect.Parameter.empty, f"execute's {name} needs a default"


@pytest.mark.parametrize("paper", PAPERS)
def test_paper_module_meets_the_protocol(paper):
    module = experiments.module(paper)
    assert isinstance(module, PaperModule)
    assert module.PAPER == paper and isinstance(module.TITLE, str) and module.TITLE
    assert isinstance(module.DATA_VERSION, int) and not isinstance(module.DATA_VERSION, bool)
    assert list(_params(module.configs)) == ["profile"]
    assert list(_params(module.measure)) == ["records"]
    _check_execute(module)
    for name, kind in OPTIONAL.items():
        if hasattr(module, name):
            assert isinstance(getattr(module, name), kind), f"{paper}.{name} must be a {kind.__name__}"
    for profile in ("smoke", "quick", "paper"):
        for config in module.configs(profile):
            assert config["paper"] == paper and config["profile"] == profile
            assert isinstance(config["experiment"], str) and isinstance(config["seed"], int)


@pytest.mark.parametrize("study", sorted(experiments.STUDIES))
def test_study_module_meets_the_protocol(study):
    module = experiments.module(study)
    assert isinstance(module, StudyModule)
    _check_execute(module)


def test_a_module_missing_a_name_fails_the_check():
    class Broken:
        TITLE, PAPER = "t", "p"

        def configs(self, profile):
            return []

    assert not isinstance(Broken(), PaperModule)


def _package_dir(paper: str) -> Path:
    module = experiments.module(paper)
    assert Path(module.__file__).name == "__init__.py", f"{paper}'s experiments module must be a package"
    return Path(module.__file__).parent


@pytest.mark.parametrize("paper", PAPERS)
def test_paper_package_has_the_common_layout(paper):
    names = {p.stem for p in _package_dir(paper).glob("*.py")} - {"__init__"}
    assert names == set(LAYOUT) | set(EXTRAS.get(paper, ())), f"{paper}: {sorted(names)}"
    module = experiments.module(paper)
    for name, home in HOME.items():
        assert getattr(module, name).__module__ == f"{module.__name__}.{home}", f"{paper}.{name} must live in {home}"
    for sub in LAYOUT:
        assert importlib.import_module(f"{module.__name__}.{sub}").__doc__, f"{paper}.{sub} needs a docstring"


def _too_long(directory: Path) -> list[str]:
    return [f"{p.name}: {n} lines" for p in sorted(directory.glob("*.py"))
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > LINE_CAP]


@pytest.mark.parametrize("paper", PAPERS)
def test_every_module_of_a_paper_package_is_under_the_line_cap(paper):
    assert _too_long(_package_dir(paper)) == []


def test_the_line_cap_check_catches_a_long_module(tmp_path):
    (tmp_path / "short.py").write_text("x = 1\n" * LINE_CAP)
    (tmp_path / "long.py").write_text("x = 1\n" * (LINE_CAP + 1))
    assert _too_long(tmp_path) == [f"long.py: {LINE_CAP + 1} lines"]


@pytest.mark.parametrize("paper", PAPERS)
def test_chapter_package_has_the_common_layout_under_the_line_cap(paper):
    module = importlib.import_module(f"dpnotes.report.{paper}")
    directory = Path(module.__file__).parent
    assert Path(module.__file__).name == "__init__.py", f"report.{paper} must be a package"
    names = {p.stem for p in directory.glob("*.py")} - {"__init__"}
    allowed = set(report.CHAPTER_LAYOUT) | set(report.CHAPTER_EXTRAS.get(paper, ()))
    assert set(report.CHAPTER_REQUIRED) <= names <= allowed, f"report.{paper}: {sorted(names)}"
    assert _too_long(directory) == []


def test_the_shared_layout_package_is_under_the_line_cap():
    from dpnotes.report import layout

    assert _too_long(Path(layout.__file__).parent) == []
