"""Which per-example gradient backend a paper-profile run uses (issue #36 item 1).

The engine's default backend is ``func`` (``torch.func`` per-example gradients); ``ghost``
(:mod:`dpnotes.train.ghost`) computes the same per-example norms and clipped sums without
materialising per-example gradients, 1.3-2.1x faster on one CPU thread for the paper models that
still ran on ``func`` (README, "Benchmarks"). ``tests/test_train_ghost.py`` checks, in float64,
that the two agree on every model and model variant of every paper config, on DPlis's K-draw
sums and on DPIS's rescaled norms.

The backend is part of a run's spec, hence of its id: switching a stored configuration would
orphan its records. So each paper lists the experiments whose *new* seeds run on ghost, with
the first such seed (every seed below it is stored on ``func``); the stored seeds keep their
ids, and the seeds of one claim may mix the two backends (same numbers up to float rounding:
the test above). A paper declares this as ``GHOST_FROM_SEED``: experiment pattern (``fnmatch``)
-> first ghost seed.
"""

from __future__ import annotations

from collections.abc import Mapping
from fnmatch import fnmatchcase

GHOST = "ghost"


def first_ghost_seed(experiment: str, ghost_from_seed: Mapping[str, int]) -> int | None:
    """The first seed of ``experiment`` that runs on ghost under ``ghost_from_seed``, or None
    when no pattern matches. Two patterns that match with different seeds are an error."""
    seeds = {s for pattern, s in ghost_from_seed.items() if fnmatchcase(experiment, pattern)}
    if len(seeds) > 1:
        raise ValueError(f"experiment {experiment!r}: GHOST_FROM_SEED patterns disagree ({sorted(seeds)})")
    return seeds.pop() if seeds else None


def choose(config: dict, ghost_from_seed: Mapping[str, int]) -> dict:
    """``config`` with ``train.grad_backend = "ghost"`` when its experiment's seed is at or past
    the first ghost seed that ``ghost_from_seed`` gives it; otherwise ``config`` unchanged (the
    same object). A config that already names another backend for such a seed is an error."""
    first = first_ghost_seed(config["experiment"], ghost_from_seed)
    if first is None or config["seed"] < first:
        return config
    named = config["train"].get("grad_backend")
    if named not in (None, GHOST):
        raise ValueError(f"experiment {config['experiment']!r} seed {config['seed']}: grad_backend {named!r} "
                         f"conflicts with GHOST_FROM_SEED (ghost from seed {first})")
    return {**config, "train": {**config["train"], "grad_backend": GHOST}}
