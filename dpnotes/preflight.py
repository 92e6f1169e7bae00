"""What a sweep will do, said before it starts, and how it stops (:func:`dpnotes.runner.run_paper`).

Before training anything, the runner:

1. checks the device (:func:`check_device`): CUDA asked for where torch sees none is named at once,
   with the fix in the caller's own terms (:data:`CALLERS`: ``--device cpu`` on the command line,
   ``device = "cpu"`` / ``-p device cpu`` in a notebook, ``device="cpu"`` in Python);
2. prints its plan (:func:`plan`): the runs still to do, their estimated CPU- and GPU-hours
   (:mod:`dpnotes.experiments.run_cost`: stored records' wall times, else bench estimates) and the
   device they will run on;
3. asks before work estimated over :data:`ASK_OVER_HOURS` on that device, or at the paper profile
   without an estimate (:func:`confirm`): the command line asks on a terminal and otherwise stops
   until ``--yes`` is given; a notebook stops until ``yes = True`` (papermill ``-p yes True``).

A sweep stopped by Ctrl-C ends with :func:`stopped`: how many runs finished and are stored, where the
interrupted run's checkpoint is kept, and how to resume. The three exceptions render as their message
alone in a notebook (``_render_traceback_``: no traceback) and as one line on the command line.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from dpnotes.results import Store
from dpnotes.spec import RunSpec

# Work estimated over this many hours on the device it runs on is started only when confirmed.
ASK_OVER_HOURS = 1.0
SHOWN = 10  # runs listed one per line in a plan; the rest are counted
# The fixes, in each caller's terms: "device" takes the device to use instead.
CALLERS = {
    "cli": {"device": "--device {0}", "yes": "add --yes", "again": "re-run the same command to resume"},
    "notebook": {"device": 'device = "{0}" in the parameters cell (papermill: -p device {0}; make book: DEVICE={0})',
                 "yes": "set yes = True in the parameters cell (papermill: -p yes True; make book: YES=1)",
                 "again": "execute the notebook again with the same parameters to resume"},
    "python": {"device": 'device="{0}"', "yes": "pass yes=True",
               "again": "call run_paper again with the same arguments to resume"},
}


class _Said:
    """An exception a notebook shows as its message alone (IPython's ``_render_traceback_``)."""

    def _render_traceback_(self) -> list[str]:
        return [str(self)]


class DeviceMissing(_Said, ValueError):
    """The device asked for is not there; the message names the fix in the caller's terms."""


class NotConfirmed(_Said, ValueError):
    """Long work was not started: it needs a confirmation; the message says what would run and how."""


class Stopped(_Said, KeyboardInterrupt):
    """A sweep stopped by Ctrl-C; the message says what is stored and kept, and how to resume."""


def terms(caller: str) -> dict[str, str]:
    if caller not in CALLERS:
        raise ValueError(f"caller must be one of {', '.join(CALLERS)}, got {caller!r}")
    return CALLERS[caller]


def check_device(device: str, caller: str) -> str:
    """``"cpu"`` or ``"cuda"`` for ``device`` (``auto``: CUDA when torch sees it); :class:`DeviceMissing`
    when CUDA is asked for and torch sees none, the fix in ``caller``'s terms. Imports torch."""
    import torch

    from dpnotes import validate
    from dpnotes.executors import DEVICES

    validate.choice("device", device, DEVICES)
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        build = (f"torch {torch.__version__} is a CPU-only build: a GPU needs a CUDA build of torch"
                 if torch.version.cuda is None else f"torch {torch.__version__} is built for CUDA "
                 f"{torch.version.cuda} but finds no GPU or driver")
        raise DeviceMissing(f"device 'cuda' was asked for but torch sees no CUDA device ({build}); to train "
                            f"on the CPU use {terms(caller)['device'].format('cpu')}")
    return device


@dataclass
class Plan:
    """The runs a sweep will train: ``lines`` to print, the estimated ``hours`` on its device (runs
    without an estimate count 0) and how many runs have ``unknown`` cost there."""

    lines: list[str]
    hours: float
    unknown: int
    runs: int
    what: str  # "<paper> [<profile>] on <device>"


def plan(paper: str, profile: str, missing: list[RunSpec], stored: int, store: Store, device: str) -> Plan:
    """The plan of ``missing`` (``stored``: how many of the sweep's runs exist already) on ``device``:
    a head line with the runs, CPU-hours, GPU-hours and device, then the first :data:`SHOWN` runs."""
    from dpnotes.experiments.run_cost import bench_seconds, estimate, reference_records

    records = reference_records(paper, profile, store)
    cpu = [estimate(s, records)[0] for s in missing]
    gpu = [bench_seconds(s, "cuda") for s in missing]
    # on a GPU, a run without a CUDA figure is priced at its CPU estimate (an upper bound)
    on_device = cpu if device == "cpu" else [g if g is not None else c for g, c in zip(gpu, cpu)]
    total = lambda xs: sum(x for x in xs if x is not None)  # noqa: E731
    gaps = lambda xs: sum(x is None for x in xs)  # noqa: E731
    priced = lambda xs, kind: f"{kind} {duration(total(xs))}" + (  # noqa: E731
        f" (+ {gaps(xs)} run(s) without an estimate)" if gaps(xs) else "")
    head = (f"{paper} [{profile}]: {len(missing)} run(s) to train on {device}, {stored} already stored; "
            f"estimated {priced(cpu, 'CPU')}, {priced(gpu, 'GPU')}")
    lines = [head]
    for spec, c, g in list(zip(missing, cpu, gpu))[:SHOWN]:
        lines.append(f"  {spec.id}  {spec.experiment}  seed={spec.seed}  cpu {duration(c)}, gpu {duration(g)}")
    if len(missing) > SHOWN:
        lines.append(f"  ... and {len(missing) - SHOWN} more (each: dpnotes run {paper} --profile {profile} --list)")
    return Plan(lines, total(on_device) / 3600, gaps(on_device), len(missing), f"{paper} [{profile}] on {device}")


def needs_asking(the_plan: Plan, profile: str) -> bool:
    """Whether ``the_plan`` is long work: over :data:`ASK_OVER_HOURS` on its device, or paper-profile
    runs without an estimate."""
    return the_plan.hours > ASK_OVER_HOURS or (profile == "paper" and the_plan.unknown > 0)


def confirm(the_plan: Plan, profile: str, *, yes: bool, caller: str, ask=None) -> None:
    """Return if ``the_plan`` may start: it is short, ``yes`` is given, or ``ask(question)`` (a terminal's
    y/N, None where there is none) says yes; else :class:`NotConfirmed` saying what would run and how
    to start it."""
    if yes or not needs_asking(the_plan, profile):
        return

    what = (f"about {duration(the_plan.hours * 3600)}" if the_plan.hours else "no estimate") + (
        f" (+ {the_plan.unknown} run(s) without an estimate)" if the_plan.unknown and the_plan.hours else "")
    size = f"{the_plan.runs} run(s) of {the_plan.what}, {what}"
    if ask is not None and ask(f"Start {size}? [y/N] "):
        return
    raise NotConfirmed(f"not started: {size}, over the {ASK_OVER_HOURS:g} h that start without asking; "
                       f"to start them, {terms(caller)['yes']}")


def stopped(finished: int, interrupted: list[RunSpec], store: Store, caller: str) -> Stopped:
    """The :class:`Stopped` of a sweep that Ctrl-C ended after ``finished`` new records, with
    ``interrupted`` the runs it had started but not finished (their checkpoints, if written, are kept)."""
    folder = Path(store.root) / ".checkpoints"
    kept = [p for s in interrupted for p in sorted(folder.glob(f"{s.id}.pt*"))]
    where = (f"checkpoint kept at {', '.join(map(str, kept))}" if kept else
             "no checkpoint yet (the interrupted run restarts from its first epoch)" if interrupted else
             "no run was in progress")
    return Stopped(f"stopped; {finished} run(s) finished and stored in {store.root}, {where}; "
                   f"{terms(caller)['again']}")


def duration(seconds: float | None) -> str:
    """``seconds`` for a reader: "45 s", "12 min", "3.5 h", "—" when unknown."""
    if seconds is None:
        return "—"
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
