"""``dpnotes bench --end-to-end PAPER``: a paper experiment's real run, cut short, and where its
time goes (issue #36 item 3).

The first config of ``PAPER`` at ``profile`` matching ``only`` is run as a *new seed* would be
(one past its highest configured seed, on the backend :mod:`dpnotes.experiments.backends`
chooses for that seed, or ``grad_backend`` if given), by the paper's own ``execute`` (data
loading, method hooks, training loop, evaluation, accounting), cut to one epoch (``steps``
steps of it if given; a target eps is dropped so that the cut run may stop early). Nothing
is stored. The loop's phase timers (:mod:`dpnotes.phases`) say how its wall time splits:

* ``steps_samples_per_s``: samples per second of the steps alone (gradients, clipping, noise,
  optimizer: what ``dpnotes bench`` times on a fixed batch);
* ``run_samples_per_s``: samples per second of the loop, evaluation, the method's passes,
  batching and per-epoch accounting included (what a run pays once, data loading, model setup
  and the final pricing by every accountant, is ``once_s``);
* ``ratio``: the second over the first; ``method_share``: the method's extra passes
  (``accept``: SA-DPSGD's candidate tests; ``method``: other hooks, DPIS's per-record norms)
  as a share of the loop's time.

A cut run weighs per-epoch passes (evaluation, DPIS's norms) more than a full epoch does:
``steps`` below the paper's steps per epoch is for quick looks only.
"""

from __future__ import annotations

import copy
from time import perf_counter

from dpnotes import experiments, phases, validate
from dpnotes.experiments import backends


def new_seed_config(paper: str, profile: str = "paper", only: str | None = None) -> dict:
    """The first config of ``paper`` at ``profile`` matching the glob ``only``, as its next new
    seed (one past the experiment's highest) would run: backend from the paper's ``GHOST_FROM_SEED``."""
    from dpnotes.runner import select

    configs = select(experiments.module(paper).configs(profile), only)
    config = copy.deepcopy(configs[0])
    seed = 1 + max(c["seed"] for c in configs if c["experiment"] == config["experiment"])
    config = {**config, "seed": seed}
    return backends.choose(config, getattr(experiments.module(paper), "GHOST_FROM_SEED", {}))


def cut(config: dict, steps: int | None, grad_backend: str | None) -> dict:
    """``config`` trained for one epoch (of ``steps`` steps if given), without a target eps,
    on ``grad_backend`` if given."""
    if config.get("train") is None:
        raise ValueError(f"experiment {config['experiment']!r} trains nothing (no train settings)")
    train = {**config["train"], "epochs": 1, "target_epsilon": None}
    if steps is not None:
        train["steps_per_epoch"] = validate.integer("steps", steps, minimum=1)
    if grad_backend is not None:
        train["grad_backend"] = grad_backend
    return {**config, "train": train}


def end_to_end(paper: str, *, profile: str = "paper", only: str | None = None, steps: int | None = None,
               grad_backend: str | None = None, device: str = "cpu") -> dict:
    """Run the cut experiment (see the module docstring) and return what it measured:
    ``paper``, ``experiment``, ``seed``, ``backend``, ``batch_size``, ``steps``, ``samples``,
    ``wall_s``, ``seconds`` per phase and :func:`dpnotes.phases.summary`'s figures."""
    config = cut(new_seed_config(paper, profile, only), steps, grad_backend)
    spec = experiments.resolve(config)
    start = perf_counter()
    with phases.collect() as timer:
        experiments.module(paper).execute(spec, device=device, progress=False, checkpoint=None)
    measured = timer.to_json(perf_counter() - start)
    return {"paper": paper, "experiment": spec.experiment, "seed": spec.seed, "model": spec.model,
            "backend": spec.train["grad_backend"] if spec.train["private"] else "non-private",
            "batch_size": spec.train["batch_size"], **measured, **phases.summary(measured)}


def format_rows(results: list[dict]) -> str:
    """A text table: one row per run, phase shares of the loop's time in percent."""
    shown = [p for p in phases.PHASES if p not in phases.ONCE]
    head = (f"{'paper':8} {'experiment':34} {'backend':11} {'B':>5} {'steps':>5} {'steps/s':>9} {'run/s':>9} "
            f"{'ratio':>6} {'method':>6} {'once_s':>6}  " + " ".join(f"{p[:6]:>6}" for p in shown))
    lines = [head]
    for r in results:
        shares = " ".join(f"{100 * r['shares'].get(p, 0.0):6.1f}" for p in shown)
        lines.append(f"{r['paper']:8} {r['experiment'][:34]:34} {r['backend']:11} {r['batch_size']:>5} "
                     f"{r['steps']:>5} {_num(r['steps_samples_per_s']):>9} {_num(r['run_samples_per_s']):>9} "
                     f"{_pct(r['ratio']):>6} {_pct(r['method_share']):>6} {r['once_s']:6.1f}  {shares}")
    lines.append("steps/s, run/s: samples per second of the steps alone and of the loop (evaluation, method "
                 "passes, batching, accounting included); shares in % of the loop's time; once_s: what a run "
                 "pays once (data loading, model setup, final pricing)")
    return "\n".join(lines)


def _num(x: float | None) -> str:
    return "-" if x is None else f"{x:,.0f}"


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.0f}%"
