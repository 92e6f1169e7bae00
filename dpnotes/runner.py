"""The runner: experiment configs in, run records out.

``run_paper`` resolves each of a paper's configs for a profile into its run spec
(:func:`dpnotes.spec.resolve`), skips those whose record is already stored, executes the
others through the paper's experiments module and stores each record atomically. A run
killed midway leaves no record, only a checkpoint (``<store>/.checkpoints/<run_id>.pt``) and
the provenance of its finished segments (``<run_id>.segments.json``), from which the next call
resumes. Paper-profile runs start only from a clean tree.
"""

from __future__ import annotations

import fnmatch
import json
import time

from tqdm import tqdm

from dpnotes import experiments, provenance, validate
from dpnotes.results import PROFILES, Store, atomic_write_text
from dpnotes.spec import RunSpec


def resolve_device(device: str) -> str:
    """``"cpu"`` or ``"cuda"`` (``"auto"`` picks CUDA when present); CUDA must exist if asked for."""
    import torch

    validate.choice("device", device, ("cpu", "cuda", "auto"))
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise ValueError("device 'cuda' was asked for but torch sees no CUDA device; use --device cpu")
    return device


def select(configs: list[dict], only: str | None) -> list[dict]:
    """Configs whose ``experiment`` matches the glob ``only`` (all if ``None``)."""
    if only is None:
        return configs
    chosen = [c for c in configs if fnmatch.fnmatch(c["experiment"], only)]
    if not chosen:
        names = sorted({c["experiment"] for c in configs})
        raise ValueError(f"--only {only!r} matches no experiment; available: {', '.join(names) or 'none'}")
    return chosen


def _segments(path, spec: RunSpec) -> list[dict]:
    """Provenance of the finished segments of an interrupted run of ``spec``."""
    if not path.exists():
        return []
    saved = json.loads(path.read_text(encoding="utf-8"))
    if saved["spec"] != spec.to_dict():
        raise ValueError(f"{path} belongs to another run spec than {spec.id}; delete it and the "
                         "checkpoint beside it to start afresh")
    return saved["segments"]


def execute(spec: RunSpec, *, device: str = "cpu", store: Store | None = None,
            progress: bool = True) -> dict:
    """Run one spec (resuming from its checkpoint if there is one) and store its record."""
    store = store or Store()
    state = provenance.source_state()
    provenance.check_clean_for(spec.profile, state)
    module = experiments.module(spec.paper)
    folder = store.root / ".checkpoints"
    folder.mkdir(parents=True, exist_ok=True)
    checkpoint, segments_path = folder / f"{spec.id}.pt", folder / f"{spec.id}.segments.json"
    segments = _segments(segments_path, spec)
    started, start = provenance.now(), time.perf_counter()
    try:
        out = module.execute(spec, device=device, progress=progress, checkpoint=checkpoint)
    finally:
        segments.append(provenance.segment(state, device, started, time.perf_counter() - start))
        atomic_write_text(segments_path, json.dumps({"spec": spec.to_dict(), "segments": segments}))
    record = {
        "id": spec.id, "spec": spec.to_dict(),
        "epochs": out["epochs"], "final": out["final"], "privacy": out["privacy"],
        "provenance": {"segments": segments, "wall_time_s": round(sum(s["wall_s"] for s in segments), 3),
                       "dirty": any(s["dirty"] for s in segments), "finished": provenance.now()},
    }
    store.put(record)
    checkpoint.unlink(missing_ok=True)
    segments_path.unlink(missing_ok=True)
    return record


def specs(paper: str, profile: str, only: str | None = None) -> list[RunSpec]:
    """The resolved specs of ``paper``'s configs at ``profile`` (matching ``only``)."""
    validate.choice("profile", profile, PROFILES)
    return [experiments.resolve(c) for c in select(experiments.module(paper).configs(profile), only)]


def run_paper(paper: str, profile: str = "quick", *, only: str | None = None, device: str = "cpu",
              run_missing: bool = True, store: Store | None = None,
              progress: bool = True) -> list[dict]:
    """Records for every config of ``paper`` at ``profile``, running the missing ones.

    With ``run_missing=False`` nothing is trained: the records already stored are returned.
    """
    experiments.module(paper)
    validate.choice("profile", profile, PROFILES)
    device = resolve_device(device)
    store = store or Store()
    todo = specs(paper, profile, only)
    records = []
    bar = tqdm(todo, desc=f"{paper} [{profile}]", unit="run", disable=not progress or not todo)
    for spec in bar:
        bar.set_postfix_str(spec.experiment)
        record = store.get(spec)
        if record is None and run_missing:
            record = execute(spec, device=device, store=store, progress=progress)
        if record is not None:
            records.append(record)
    return records


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
        s = record["spec"]
        ids = wanted.get((s["profile"], s["experiment"], s["seed"]))
        if ids is not None and record["id"] not in ids:
            out.append(record)
    return out
