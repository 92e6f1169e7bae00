"""Test-suite configuration shared by every test module.

nbval (``make test`` passes ``--nbval-lax``) runs each reference notebook in
``tests/notebooks/`` in a fresh kernel, which inherits this process's environment when it
starts, during the setup of the notebook's first cell.  Each notebook gets its own empty
results store there, as ``make nbval-refresh`` gave it, so its checked outputs never
depend on records that other runs left behind. Every test gets its own scoreboard cache.
"""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest

try:
    from nbval.plugin import IPyNbCell
except ImportError:  # a machine without the notebook tools (the lent GPU): no notebook items exist
    IPyNbCell = ()

_STORES: dict[str, str] = {}  # notebook node id -> its results store


@pytest.fixture(autouse=True)
def _own_scoreboard_cache(tmp_path_factory, monkeypatch):
    """Each test its own ``dpnotes scoreboard`` cache (dpnotes.scoreboard_cache): an entry one test
    computed can never answer another that monkeypatched what the key does not see, and the
    user's cache is left alone."""
    monkeypatch.setenv("DPNOTES_SCOREBOARD_CACHE", str(tmp_path_factory.mktemp("scoreboard-cache")))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item):
    if not isinstance(item, IPyNbCell):
        yield
        return
    notebook = item.parent.nodeid
    if notebook not in _STORES:
        _STORES[notebook] = tempfile.mkdtemp(prefix="dpnotes-nbval-results-")
    saved = os.environ.get("DPNOTES_RESULTS")
    os.environ["DPNOTES_RESULTS"] = _STORES[notebook]
    try:
        yield
    finally:
        if saved is None:
            del os.environ["DPNOTES_RESULTS"]
        else:
            os.environ["DPNOTES_RESULTS"] = saved


def pytest_sessionfinish(session, exitstatus):
    for store in _STORES.values():
        shutil.rmtree(store, ignore_errors=True)


@pytest.fixture
def no_seeds_plan():
    """The paper profiles as their own modules define them, without the seeds plan's additions
    (:mod:`dpnotes.experiments.plan`; tests/test_plan.py tests those)."""
    from dpnotes.experiments import plan

    plan._OVERRIDE.append(plan.Plan("", ()))
    yield
    plan._OVERRIDE.pop()
