"""The papers' training methods, one module each, plugged into the one loop (dpnotes.train).

A method module defines

``VERSION: int``
    Bumped whenever the method's behaviour (hence a run's numbers) changes; part of every run
    spec that uses the method (:mod:`dpnotes.spec`).
``Config``
    A frozen dataclass of the method's settings, each documented with the paper's section
    and equation; validated when built.
``resolve(settings: dict) -> dict``
    The settings with every default filled in (what a run spec stores).
``hooks(config: Config) -> tuple[dpnotes.train.Plugin, ...]``
    The plug-ins that make the loop run the method. A plug-in that changes what is
    released (sampling, noise, extra releases) writes the matching events to the run's
    privacy ledger (``step_event`` hook, ``ctx.release``); the loop knows no paper.
``run(model, train_data, test_data, train_config, config, *, plugins, progress, checkpoint) -> dict`` (optional)
    For a method that is not one call of the loop (LabelDP's LP-MST trains in stages): trains
    and returns what :func:`dpnotes.train.train` returns. Without it the experiments call
    ``train`` with :func:`hooks`.

Adding a method: write ``dpnotes/methods/<name>.py`` with the four names above, add it to
:data:`METHODS`, and test that its events price to the paper's epsilon.
"""

from __future__ import annotations

import importlib
from types import ModuleType

METHODS = ("dpsgd", "dpsgd_decay", "dplis", "dpis", "sadpsgd", "labeldp")


def module(name: str) -> ModuleType:
    """The module of method ``name``; ``ValueError`` naming the known methods otherwise."""
    if name not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}; got {name!r}")
    return importlib.import_module(f"{__name__}.{name}")
