"""One package per paper: the runs behind its tables and figures, and how they answer its claims.

Every package ``dpnotes.experiments.<paper>`` has the same modules (settings, privacy, runs,
training, cells, answers, not_run: :data:`dpnotes.experiments.protocol.LAYOUT`, each at most
:data:`~dpnotes.experiments.protocol.LINE_CAP` lines) and its ``__init__`` defines (the contract
as a ``typing.Protocol``: :class:`dpnotes.experiments.protocol.PaperModule`, checked for every
paper by ``tests/test_experiments_protocol.py``):

``TITLE: str``
    The paper's citation line.
``PAPER: str``
    The paper's short name (``dpis``, ...), as in the claims registry.
``configs(profile: str) -> list[dict]``
    The run configs for a profile (``smoke``, ``quick``, ``paper``).  Each config is
    JSON-serialisable and holds everything that determines the run, at least
    ``paper``, ``profile``, ``experiment`` (e.g. ``"table1.row2"``) and ``seed``.
    ``--only PATTERN`` matches ``experiment`` with :func:`fnmatch.fnmatch`.
``DATA_VERSION: int``
    Behaviour version of the module's data pipeline (loading, splits, tokenisation): part of
    every run spec (:mod:`dpnotes.spec`); bump it when the pipeline changes what a run sees.
``METHOD_VERSIONS: dict[str, int]`` (optional)
    Versions of non-DP baselines the module computes itself (not in :mod:`dpnotes.methods`).
``execute(spec: dpnotes.spec.RunSpec, *, device: str, progress: bool, checkpoint: pathlib.Path | None) -> dict``
    Runs one resolved spec and returns ``{"epochs": [per-epoch metric dicts], "final": {...},
    "privacy": {"accountant": name, "epsilon": .., "delta": .., ...}}``.  The runner
    adds the rest of the run record (see :mod:`dpnotes.results`).
``measure(records: list[dict]) -> list[dpnotes.experiments.measurement.Measurement]``
    Our value for each claim of the paper that the module can answer, computed from
    run records (training claims) or directly (exact claims), and the kind of rule that
    judges it; never a verdict: :mod:`dpnotes.report.verdicts` alone decides those.
    Claims a module does not answer are reported as ``not_run`` with
    ``NOT_RUN.get(claim_id, NOT_RUN_DEFAULT)`` as the reason: ``NOT_RUN`` (``reasons()``, computed on
    first use) comes from the paper's table of (claim-id pattern, reason) rows (``not_run_table()``
    or ``NOT_RUN_TABLE``)
    through :func:`dpnotes.experiments.not_run.reasons`, which the tests check matches every
    claim not measured exactly once; ``NOT_RUN_DEFAULT`` is :data:`~dpnotes.experiments.not_run.DEFAULT`.
``SUBSTITUTES: dict[str, str]`` (optional)
    Claim-id patterns (:func:`fnmatch.fnmatch`) -> what our runs for those claims do otherwise
    than the paper (model, data, epochs, accountant, an inferred setting). A measured claim
    matched by any pattern has fidelity ``substitute`` with every matching text
    (:func:`substitute`); the others have the paper's settings.
``DIFFERENCES: tuple[Difference, ...]`` (optional)
    Each substitute with what it changes, the claims it touches, how the share of a verdict's
    difference to the paper that it explains is measured or why no record can, and whether the
    paper's setting was run or is queued (:mod:`dpnotes.experiments.differences`).
"""

from __future__ import annotations

import fnmatch
import importlib
from types import ModuleType

from dpnotes import spec
from dpnotes.claims import PAPERS
from dpnotes.record import Record, add_final

# studies run like a paper, records under results/<study>/
STUDIES = {"audit": "dpnotes.audit.campaign", "audit-step": "dpnotes.audit.step_run",
           "compare": "dpnotes.experiments.compare"}


def module(paper: str) -> ModuleType:
    """The experiments module of a paper (or of a study of :data:`STUDIES`); ``ValueError`` otherwise."""
    if paper in STUDIES:
        return importlib.import_module(STUDIES[paper])
    if paper not in PAPERS:
        raise ValueError(f"paper must be one of {', '.join(PAPERS + tuple(STUDIES))}; got {paper!r}")
    return importlib.import_module(f"{__name__}.{paper}")


def substitute(paper: str, claim_id: str) -> str | None:
    """What the runs behind ``claim_id`` do otherwise than the paper (``SUBSTITUTES`` of its
    module, every matching pattern's text joined), or None: the paper's settings."""
    table = getattr(module(paper), "SUBSTITUTES", {})
    texts = list(dict.fromkeys(text for pattern, text in table.items() if fnmatch.fnmatchcase(claim_id, pattern)))
    return "; ".join(texts) or None


def resolve(config: dict) -> spec.RunSpec:
    """The fully resolved run spec of a config of any paper's experiments module."""
    return spec.resolve(config, module(config["paper"]))


def current(records: list[dict], configs: list[dict]) -> dict[str, list[dict]]:
    """The records that answer ``configs`` (the experiment's current specs), by experiment name;
    stale records (another spec for the same experiment) answer nothing."""
    ids = {resolve(c).id for c in configs}
    out: dict[str, list[dict]] = {}
    for r in records:
        if Record.of(r).id in ids:
            out.setdefault(Record.of(r).experiment, []).append(r)
    return out


def train_spec(spec: spec.RunSpec, train_data, test_data, *, device: str, progress: bool, checkpoint,
               extra_plugins: tuple = (), validation_data=None, analyse=None) -> dict:
    """Train the model of a resolved spec with its method's hooks (plus ``extra_plugins``, e.g.
    an extra metric) on the given data (``validation_data``: held-out examples an accept rule
    may read); the seed fixes the model's initialisation. ``analyse(model)``, if given, measures
    the trained model (the spec's ``analysis``); its dict goes to ``final["analysis"]``."""
    import torch

    from dpnotes import methods, models
    from dpnotes.train import TrainConfig, train

    torch.manual_seed(spec.seed)
    method = methods.module(spec.method)
    config = method.Config(**spec.method_config)
    model = models.create(spec.model, **spec.model_kwargs)
    train_config = TrainConfig(**spec.train, device=device)
    if hasattr(method, "run"):  # a method that trains in several calls of the loop (LP-MST)
        if validation_data is not None:
            raise ValueError(f"method {spec.method!r} trains in several calls of the loop and takes no validation_data")
        out = method.run(model, train_data, test_data, train_config, config, plugins=tuple(extra_plugins),
                         progress=progress, checkpoint=checkpoint)
    else:
        out = train(model, train_data, test_data, train_config, plugins=method.hooks(config) + tuple(extra_plugins),
                    progress=progress, checkpoint=checkpoint, validation_data=validation_data)
    if analyse is not None:
        add_final(out, analysis=analyse(model))
    return out
