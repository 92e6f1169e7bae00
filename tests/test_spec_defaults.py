"""The library's defaults may change; stored run specs and their ids may not.

``TrainConfig()`` trains with ``grad_backend="ghost"`` (the fastest backend, equal to "func" on
every registered model: tests/test_train_ghost.py), while a run config that names no backend
still resolves to the "func" its stored records were made with (``SPEC_DEFAULTS``)."""

import json
from pathlib import Path

import pytest

from dpnotes import experiments
from dpnotes.train import TrainConfig
from dpnotes.train.config import SPEC_DEFAULTS

RESULTS = Path(__file__).resolve().parents[1] / "results"


def test_the_library_default_backend_is_ghost_and_specs_keep_func():
    assert TrainConfig().grad_backend == "ghost"
    assert SPEC_DEFAULTS == {"grad_backend": "func"}


def _with_backend(config: dict, backend: str) -> dict:
    return {**config, "train": {**config["train"], "grad_backend": backend}}


@pytest.mark.parametrize("paper", ["dplis", "dpis", "gdp", "labeldp", "sadpsgd", "audit"])
def test_a_config_that_names_no_backend_keeps_its_stored_id(paper):
    """Each paper- and quick-profile config without ``grad_backend`` has the id of the same config
    naming "func" (what its records were stored under), not that of "ghost"; and some of these
    ids are committed records, so the ids checked are the stored ones."""
    stored = {p.stem for p in (RESULTS / paper).glob("*/*.json")}
    checked, found = 0, 0
    for profile in ("paper", "quick"):
        try:
            configs = experiments.module(paper).configs(profile)
        except FileNotFoundError as err:  # some papers size their models from the data mirror
            pytest.skip(f"needs the data mirror: {err}")
        for config in configs:
            if "grad_backend" in (config.get("train") or {}) or "train" not in config:
                continue
            spec = experiments.resolve(config)
            if not spec.train:  # a baseline the experiment computes itself (no TrainConfig)
                continue
            assert spec.train["grad_backend"] == "func"
            assert spec.id == experiments.resolve(_with_backend(config, "func")).id
            if spec.train["private"]:
                assert spec.id != experiments.resolve(_with_backend(config, "ghost")).id
            checked += 1
            found += spec.id in stored
    assert checked and found, f"{paper}: {checked} configs name no backend, {found} of them stored"


def test_every_committed_record_names_its_backend():
    """Stored specs carry ``grad_backend`` explicitly (the resolved TrainConfig; baselines that
    an experiment computes itself have no train settings), so a changed library default can
    never reinterpret one."""
    records = sorted(RESULTS.glob("*/*/*.json"))
    assert records
    for path in records:
        train = json.loads(path.read_text())["spec"]["train"]
        assert not train or train["grad_backend"] in ("func", "ghost", "opacus"), path
