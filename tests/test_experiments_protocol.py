"""Every paper's experiments module meets :class:`dpnotes.experiments.protocol.PaperModule`."""

from __future__ import annotations

import inspect

import pytest

from dpnotes import experiments
from dpnotes.claims import PAPERS
from dpnotes.experiments.protocol import OPTIONAL, PaperModule, StudyModule


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
