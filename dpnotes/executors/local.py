"""The local executor: one run after another in this process, and the steps every executor
shares (train a spec into a record, store it).

A run killed midway leaves no record, only checkpoints (``<store>/.checkpoints/<run_id>.pt``;
LP-MST adds one per stage, ``.pt.stage<t>``) and the provenance of its segments
(``<run_id>.segments.json``), from which the next attempt resumes. A segment is written there
when it starts, so one killed without a chance to close (SIGKILL, the end of a session) is
still recorded: the next attempt marks it ``interrupted``, with its wall time up to the last
checkpoint it wrote (file times, so checkpoints must stay where they were written), or drops it
if it wrote none (it then contributed nothing). A segment ended by an exception closes itself,
``interrupted`` too. Paper-profile runs start only from a clean tree. A segment that finishes
holds its ``phases``: where its wall time went (:mod:`dpnotes.phases`; provenance, not spec).

One process at a time runs a given run into a given store (:mod:`dpnotes.executors.lock`): a
second one asked for it stops at once with a named error, before it trains or touches the
first one's checkpoint and live segment; one that gets the lock after the first stored the
record returns that record.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

from dpnotes import experiments, phases, provenance
from dpnotes.executors import reference
from dpnotes.executors.lock import run_lock
from dpnotes.record import Record, assemble
from dpnotes.results import Store, atomic_write_text
from dpnotes.spec import RunSpec


def resolve_device(device: str, caller: str = "cli") -> str:
    """``"cpu"`` or ``"cuda"`` (``"auto"`` picks CUDA when present); CUDA must exist if asked for
    (:func:`dpnotes.preflight.check_device`: the fix in ``caller``'s terms)."""
    from dpnotes.preflight import check_device

    return check_device(device, caller)


def _checkpoint_paths(folder: Path, spec: RunSpec) -> tuple[Path, Path]:
    return folder / f"{spec.id}.pt", folder / f"{spec.id}.segments.json"


def _checkpoint_files(checkpoint: Path) -> list[Path]:
    """The checkpoint and any a method derives from it (LP-MST's ``.stage<t>`` files)."""
    return sorted(checkpoint.parent.glob(checkpoint.name + "*"))


def _segments(path: Path, checkpoint: Path, spec: RunSpec) -> list[dict]:
    """Provenance of the earlier segments of an interrupted run of ``spec``; an open one (its
    process was killed) is closed at the time of the checkpoint it left, if any. Without a
    checkpoint the run starts afresh: no earlier segment is part of it."""
    if not path.exists() or not _checkpoint_files(checkpoint):
        return []
    try:
        saved = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(saved, dict) or not isinstance(saved.get("segments"), list):
            raise ValueError("no list of segments")
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError included
        raise ValueError(f"{path}: not a complete segments file (truncated? {exc}); delete it and the "
                         "checkpoint beside it to start afresh") from None
    if saved.get("spec") != spec.to_dict():
        raise ValueError(f"{path} belongs to another run spec than {spec.id}; delete it and the "
                         "checkpoint beside it to start afresh")
    out = []
    for seg in saved["segments"]:
        if seg.pop("open", False):
            written = max((f.stat().st_mtime for f in _checkpoint_files(checkpoint)), default=0.0)
            kept = written - seg.pop("started_unix")
            if kept <= 0:
                continue  # killed before its first checkpoint: nothing of it is in the run
            seg.update(wall_s=round(kept, 3), interrupted=True)
        out.append(seg)
    return out


def done_seconds(folder: Path, spec: RunSpec) -> float:
    """Wall seconds of ``spec``'s earlier segments kept in its checkpoint under ``folder`` (0 when
    it has none, or its segments file is unreadable: the run would start afresh or refuse)."""
    checkpoint, segments = _checkpoint_paths(folder, spec)
    try:
        return sum(float(s.get("wall_s", 0.0)) for s in _segments(segments, checkpoint, spec))
    except (ValueError, OSError):
        return 0.0


def train_record(spec: RunSpec, *, device: str, checkpoints: Path, progress: bool) -> dict:
    """Run one spec, resuming from its checkpoint in the folder ``checkpoints`` if there is one,
    and return its record (not stored: the checkpoint stays until :func:`store_record`). The
    caller holds the run's lock (:func:`dpnotes.executors.lock.run_lock`)."""
    state = provenance.source_state()
    provenance.check_clean_for(spec.profile, state)
    module = experiments.module(spec.paper)
    checkpoints.mkdir(parents=True, exist_ok=True)
    checkpoint, segments_path = _checkpoint_paths(checkpoints, spec)
    segments = _segments(segments_path, checkpoint, spec)
    started, start = provenance.now(), time.perf_counter()

    def save(current: dict) -> None:
        atomic_write_text(segments_path, json.dumps({"spec": spec.to_dict(), "segments": segments + [current]}))

    save({**provenance.segment(state, device, started, 0.0), "open": True, "started_unix": time.time()})
    try:
        with phases.collect() as timer:
            out = module.execute(spec, device=device, progress=progress, checkpoint=checkpoint)
    except BaseException:
        save({**provenance.segment(state, device, started, time.perf_counter() - start), "interrupted": True})
        raise
    wall = time.perf_counter() - start
    finished = {**provenance.segment(state, device, started, wall), "phases": timer.to_json(wall)}
    save(finished)  # kept if the store then refuses the record: a later attempt resumes after it
    segments.append(finished)
    return assemble(spec.id, spec.to_dict(), out, {
        "segments": segments, "wall_time_s": round(sum(s["wall_s"] for s in segments), 3),
        "dirty": any(s["dirty"] for s in segments), "finished": provenance.now()})


def store_record(store: Store, finished: dict) -> None:
    """Store a finished run's record, then remove its checkpoints and segments file."""
    store.put(finished)
    checkpoint, segments = _checkpoint_paths(store.root / ".checkpoints", RunSpec.from_dict(Record.of(finished).spec))
    for path in (*_checkpoint_files(checkpoint), segments):
        path.unlink(missing_ok=True)


def execute(spec: RunSpec, *, device: str = "cpu", store: Store | None = None,
            progress: bool = True) -> dict:
    """Run one spec (resuming from its checkpoint if there is one) and store its record; with
    the run's lock held throughout (:class:`~dpnotes.executors.lock.RunLocked` at once if
    another process runs it). A record stored meanwhile by another process is returned as is."""
    store = store or Store()
    folder = store.root / ".checkpoints"
    with run_lock(folder, spec.id, f"{spec.paper} {spec.experiment} seed {spec.seed}"):
        stored = store.get(spec)
        if stored is not None:
            return stored
        record = train_record(spec, device=device, checkpoints=folder, progress=progress)
        store_record(store, record)
    return record


class Executor:
    """Runs specs one after another in this process, with torch's current thread setting, or on
    the CPU with the thread count of a spec's committed record (:mod:`dpnotes.executors.reference`):
    ``threads`` is ``--threads`` as given (None: not given)."""

    def __init__(self, threads: int | None = None):
        self.threads = threads

    def run(self, specs: Iterable[RunSpec], *, device: str, store: Store,
            progress: bool) -> Iterator[dict]:
        import torch

        device = resolve_device(device)
        for spec in specs:
            threads, note = reference.threads_for(spec, device, store, self.threads)
            if note:
                print(note, file=sys.stderr)
            before = torch.get_num_threads()
            if threads is not None:
                torch.set_num_threads(threads)
            if progress:
                from tqdm import tqdm

                tqdm.write(f"start {spec.id}  {spec.experiment}  seed={spec.seed}  on {device}", file=sys.stderr)
            try:
                record = execute(spec, device=device, store=store, progress=progress)
            finally:
                torch.set_num_threads(before)
            yield record
