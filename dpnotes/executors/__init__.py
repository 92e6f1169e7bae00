"""Executors: where a sweep's missing runs execute.

An executor has one method, ``run(specs, *, device, store, progress) -> Iterator[dict]``: it
executes every run spec given, stores each record in ``store`` (the atomic writer of
:class:`dpnotes.results.Store`, checkpoints under ``<store>/.checkpoints``) and yields the
records in the order they finish. Two exist:

``local``
    one run after another in this process (:mod:`dpnotes.executors.local`);
``ray``
    one Ray task per run on a Ray cluster, or a Ray instance started on this machine
    (:mod:`dpnotes.executors.ray`; needs the optional extra ``dpnotes[ray]``).

Both compute the same records: the same run ids, and on a CPU with the same number of torch
threads the same numbers; only timing and host fields (provenance wall times, start times,
device names) differ.
"""

from __future__ import annotations

import importlib

NAMES = ("local", "ray")
DEVICES = ("cpu", "cuda", "auto")


class ExecutorError(ValueError):
    """A sweep cannot start as asked (no Ray, no cluster, resources no node has); the message
    says what to do. Nothing stored is touched."""


def create(name: str, **options):
    """The executor ``name`` (one of :data:`NAMES`) built with ``options``; its module is
    imported only now, so Ray is imported only when asked for."""
    if name not in NAMES:
        raise ExecutorError(f"executor must be one of {', '.join(NAMES)}; got {name!r}")
    return importlib.import_module(f"{__name__}.{name}").Executor(**options)
