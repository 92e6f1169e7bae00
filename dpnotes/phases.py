"""Where a run's wall time goes: cheap phase timers around the training loop (issue #36).

The loop (:func:`dpnotes.train.train`) attributes each interval of its wall time to one phase
of :data:`PHASES`, exclusively: a phase entered inside another pauses it (the test pass of an
``eval_every`` point inside a step counts as ``eval``, not ``step``). Two ``perf_counter`` calls
per phase change, nothing else: the timers run in every run.

Phases: ``setup`` (model and data to the device), ``batch`` (Poisson draw, gather,
``transform_batch``), ``step`` (gradients, clipping, noise, optimizer), ``accept`` (an accept
rule's candidate tests: SA-DPSGD's energy), ``eval`` (test passes), ``method`` (the other
plug-in hooks: DPIS's per-record norms each epoch, per-step hooks), ``accounting`` (pricing the
ledger after each epoch by the cheap accountants, the target-eps stop), ``checkpoint``, ``loop``
(the rest of :func:`~dpnotes.train.train`), ``final`` (the run's pricing by every accountant, the
slow ones included, once at its end) and ``outside`` (the run's wall time outside the loop:
loading and preparing data, DPIS's ScatterNet features, analyses of the trained model).

:func:`collect` gathers the phases of every loop run inside it (a method may run the loop
several times, LP-MST); the executor stores them in the run's provenance segment
(:mod:`dpnotes.executors.local`), never in its spec, so run ids do not depend on them.
"""

from __future__ import annotations

from contextlib import contextmanager
from time import perf_counter

PHASES = ("setup", "batch", "step", "accept", "eval", "method", "accounting", "checkpoint", "loop", "final",
          "outside")
# The passes a paper's algorithm adds to DP-SGD (reported as its share of the run).
METHOD_PHASES = ("accept", "method")
# What a run pays once, however long it trains (data loading, model setup, torch's lazy imports,
# the final pricing by every accountant).
ONCE = ("setup", "final", "outside")


class Timer:
    """Exclusive seconds per phase, and the samples and steps the loop trained on."""

    def __init__(self) -> None:
        self.seconds = dict.fromkeys(PHASES, 0.0)
        self.samples = 0
        self.steps = 0
        self._stack: list[str] = []
        self._since = 0.0

    @contextmanager
    def phase(self, name: str):
        """Time the block as ``name`` (pausing the enclosing phase)."""
        if name not in self.seconds:
            raise ValueError(f"phase must be one of {', '.join(PHASES)}, got {name!r}")
        now = perf_counter()
        if self._stack:
            self.seconds[self._stack[-1]] += now - self._since
        self._stack.append(name)
        self._since = now
        try:
            yield
        finally:
            now = perf_counter()
            self.seconds[self._stack.pop()] += now - self._since
            self._since = now

    def count(self, samples: int) -> None:
        """One step on ``samples`` examples (a rejected candidate step counts too)."""
        self.samples += int(samples)
        self.steps += 1

    def to_json(self, wall_s: float) -> dict:
        """``{"wall_s", "samples", "steps", "seconds": {phase: s}}`` of a run whose wall time is
        ``wall_s``: what the loop did not account for is ``outside``."""
        seconds = dict(self.seconds)
        seconds["outside"] = max(wall_s - sum(v for k, v in seconds.items() if k != "outside"), 0.0)
        return {"wall_s": round(wall_s, 6), "samples": self.samples, "steps": self.steps,
                "seconds": {k: round(v, 6) for k, v in seconds.items()}}


_active: list[Timer] = []


def current() -> Timer:
    """The timer of the innermost :func:`collect`, or a fresh one nobody reads."""
    return _active[-1] if _active else Timer()


@contextmanager
def collect():
    """Collect the phases of every training loop run inside the block: yields a
    :class:`Timer`; ``timer.to_json(wall_s)`` summarises it."""
    timer = Timer()
    _active.append(timer)
    try:
        yield timer
    finally:
        _active.remove(timer)


def summary(phases: dict) -> dict:
    """From :meth:`Timer.to_json`: samples/s of the steps alone (``steps_samples_per_s``) and of
    the loop (``run_samples_per_s``: the wall time less what a run pays once, :data:`ONCE`), their
    ``ratio``, the method's passes (:data:`METHOD_PHASES`) as a share of the loop's time
    (``method_share``), each other phase's share of it (``shares``) and the one-off seconds
    (``once_s``); None where a denominator is 0."""
    seconds, samples = phases["seconds"], phases["samples"]
    once = sum(seconds[k] for k in ONCE)
    step, loop = seconds["step"], phases["wall_s"] - once
    steps_rate = samples / step if step > 0 else None
    run_rate = samples / loop if loop > 0 else None
    return {"steps_samples_per_s": steps_rate, "run_samples_per_s": run_rate,
            "ratio": run_rate / steps_rate if steps_rate and run_rate is not None else None,
            "method_share": sum(seconds[k] for k in METHOD_PHASES) / loop if loop > 0 else None,
            "shares": {k: v / loop for k, v in seconds.items() if k not in ONCE} if loop > 0 else {},
            "once_s": once}
