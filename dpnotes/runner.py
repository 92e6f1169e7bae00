"""The runner: experiment configs in, run records out.

``run_paper`` resolves each of a paper's configs for a profile into its run spec
(:func:`dpnotes.spec.resolve`), skips those whose record is already stored, and hands the
others to an executor (:mod:`dpnotes.executors`: this process, or a Ray cluster), which
stores each record atomically as it finishes. A run killed midway leaves no record, only a
checkpoint from which the next call resumes (:mod:`dpnotes.executors.local`). Paper-profile
runs start only from a clean tree.
"""

from __future__ import annotations

import fnmatch
import sys

from tqdm import tqdm

from dpnotes import executors, experiments, preflight, validate
from dpnotes.executors.local import execute, resolve_device  # noqa: F401  (the runner's API)
from dpnotes.record import Record
from dpnotes.results import PROFILES, Store
from dpnotes.spec import RunSpec


def select(configs: list[dict], only: str | None, seeds=None) -> list[dict]:
    """Configs whose ``experiment`` matches the glob ``only`` (all if ``None``) and whose seed
    is in ``seeds`` (all if ``None``)."""
    chosen = configs
    if only is not None:
        chosen = [c for c in chosen if fnmatch.fnmatch(c["experiment"], only)]
        if not chosen:
            names = sorted({c["experiment"] for c in configs})
            raise ValueError(f"--only {only!r} matches no experiment; available: {', '.join(names) or 'none'}")
    if seeds is not None:
        available = sorted({c["seed"] for c in chosen})
        chosen = [c for c in chosen if c["seed"] in set(seeds)]
        if not chosen:
            raise ValueError(f"--seeds {','.join(map(str, seeds))} matches no run; available seeds: "
                             f"{','.join(map(str, available))}")
    return chosen


def specs(paper: str, profile: str, only: str | None = None, seeds=None) -> list[RunSpec]:
    """The resolved specs of ``paper``'s configs at ``profile`` (matching ``only`` and ``seeds``)."""
    validate.choice("profile", profile, PROFILES)
    return [experiments.resolve(c) for c in select(experiments.module(paper).configs(profile), only, seeds)]


def finished_line(record: dict) -> str:
    """One line saying which run finished, its test accuracy (if it has one) and its wall time."""
    r = Record.of(record)
    acc = f"  test_acc {r.test_acc:.4f}" if isinstance(r.metric_or("test_acc"), float) else ""
    return f"done {r.id}  {r.experiment}  seed={r.seed}{acc}  {r.wall_time_s:.1f} s"


def run_paper(paper: str, profile: str = "quick", *, only: str | None = None, seeds=None, device: str = "cpu",
              run_missing: bool = True, store: Store | None = None, progress: bool = True,
              executor=None, yes: bool = True, caller: str = "python", ask=None) -> list[dict]:
    """Records for every config of ``paper`` at ``profile`` (in config order), running the
    missing ones on ``executor`` (default: the local one, :mod:`dpnotes.executors`).

    With ``run_missing=False`` nothing is trained: the records already stored are returned.
    Before training (:mod:`dpnotes.preflight`): the device is checked, with the fix in the
    ``caller``'s terms (``"cli"``, ``"notebook"``, ``"python"``); with ``progress`` the plan is
    printed (the runs to do, their estimated CPU/GPU-hours, the device); work estimated over
    :data:`~dpnotes.preflight.ASK_OVER_HOURS` starts only with ``yes`` or when ``ask`` (a
    terminal's y/N) says so, else :class:`~dpnotes.preflight.NotConfirmed`. With ``progress``, one
    bar counts the runs done out of all (ETA), each run's epochs have a bar and a line is written
    per started and finished run (all on stderr). Ctrl-C ends in :class:`~dpnotes.preflight.Stopped`
    (a ``KeyboardInterrupt``) saying what is stored, which checkpoint is kept and how to resume.
    """
    experiments.module(paper)
    validate.choice("profile", profile, PROFILES)
    validate.choice("device", device, executors.DEVICES)
    preflight.terms(caller)
    if not isinstance(yes, bool):
        raise ValueError(f"yes must be True or False, got {yes!r}")
    store = store or Store()
    todo = specs(paper, profile, only, seeds)
    stored = {spec.id: store.get(spec) for spec in todo}
    missing = list({spec.id: spec for spec in todo if stored[spec.id] is None}.values())
    if run_missing and missing:
        executor = executor or executors.create("local")
        device = _device(executor, device, caller)
        the_plan = preflight.plan(paper, profile, missing, len(todo) - len(missing), store, device)
        if progress:
            print("\n".join(the_plan.lines), file=sys.stderr)
        preflight.confirm(the_plan, profile, yes=yes, caller=caller, ask=ask)
        done: set[str] = set()
        bar = tqdm(total=len(todo), initial=len(todo) - len(missing), desc=f"{paper} [{profile}]",
                   unit="run", disable=not progress)
        try:
            with bar:
                for record in executor.run(missing, device=device, store=store, progress=progress):
                    stored[record["id"]] = record
                    done.add(record["id"])
                    bar.update(1)
                    if progress:
                        bar.write(finished_line(record), file=sys.stderr)
        except KeyboardInterrupt:
            raise preflight.stopped(len(done), [s for s in missing if s.id not in done], store, caller) from None
    return [stored[spec.id] for spec in todo if stored[spec.id] is not None]


def _device(executor, device: str, caller: str) -> str:
    """The device ``executor`` will train on (checked: :func:`dpnotes.preflight.check_device` for the
    local one; an executor with its own rule, Ray's, applies it)."""
    own = getattr(executor, "device", None)
    return own(device) if callable(own) else preflight.check_device(device, caller)


def stale(paper: str, store: Store | None = None) -> list[dict]:
    """Stored records of ``paper`` that no current config asks for any more although one asks
    for the same (profile, experiment, seed): the experiment now wants a different spec."""
    store = store or Store()
    wanted = {}
    for profile in PROFILES:
        for spec in specs(paper, profile):
            wanted.setdefault((profile, spec.experiment, spec.seed), set()).add(spec.id)
    out = []
    for record in store.records(paper):
        r = Record.of(record)
        ids = wanted.get((r.profile, r.experiment, r.seed))
        if ids is not None and record["id"] not in ids:
            out.append(record)
    return out
