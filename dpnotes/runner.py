"""The runner: experiment configs in, run records out.

``run_paper`` walks a paper's configs for a profile, skips those whose record is
already in the store, executes the others through the paper's experiments module
and stores each record atomically.  A run killed midway leaves no record, only a
checkpoint (``<store>/.checkpoints/<run_id>.pt``) from which the next call resumes.
"""

from __future__ import annotations

import datetime as _dt
import fnmatch
import time
from pathlib import Path

from tqdm import tqdm

from dpnotes import experiments, validate
from dpnotes.results import PROFILES, Store, git_commit, library_versions, run_id


def resolve_device(device: str) -> str:
    """``"cpu"`` or ``"cuda"`` (``"auto"`` picks CUDA when present); CUDA must exist if asked for."""
    import torch

    validate.choice("device", device, ("cpu", "cuda", "auto"))
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise ValueError("device 'cuda' was asked for but torch sees no CUDA device; use --device cpu")
    return device


def device_name(device: str) -> str:
    """A human-readable name of the device a record was produced on."""
    import platform

    import torch

    if device == "cuda":
        return f"cuda: {torch.cuda.get_device_name()}"
    return f"cpu: {platform.processor() or platform.machine()}, {torch.get_num_threads()} threads"


def select(configs: list[dict], only: str | None) -> list[dict]:
    """Configs whose ``experiment`` matches the glob ``only`` (all if ``None``)."""
    if only is None:
        return configs
    chosen = [c for c in configs if fnmatch.fnmatch(c["experiment"], only)]
    if not chosen:
        names = sorted({c["experiment"] for c in configs})
        raise ValueError(f"--only {only!r} matches no experiment; available: {', '.join(names) or 'none'}")
    return chosen


def execute(config: dict, *, device: str = "cpu", store: Store | None = None,
            progress: bool = True) -> dict:
    """Run one config (resuming from its checkpoint if there is one) and store its record."""
    store = store or Store()
    module = experiments.module(config["paper"])
    rid = run_id(config)
    checkpoint = store.root / ".checkpoints" / f"{rid}.pt"
    checkpoint.parent.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    out = module.execute(config, device=device, progress=progress, checkpoint=checkpoint)
    record = {
        "id": rid,
        "config": config,
        "seed": config["seed"],
        "epochs": out["epochs"],
        "final": out["final"],
        "privacy": out["privacy"],
        "wall_time_s": round(time.perf_counter() - start, 3),
        "device": device_name(device),
        "versions": library_versions(),
        "git_commit": git_commit(),
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    }
    store.put(record)
    checkpoint.unlink(missing_ok=True)
    return record


def run_paper(paper: str, profile: str = "quick", *, only: str | None = None, device: str = "cpu",
              run_missing: bool = True, store: Store | None = None,
              progress: bool = True) -> list[dict]:
    """Records for every config of ``paper`` at ``profile``, running the missing ones.

    With ``run_missing=False`` nothing is trained: the records already stored are returned.
    """
    module = experiments.module(paper)
    validate.choice("profile", profile, PROFILES)
    device = resolve_device(device)
    store = store or Store()
    configs = select(module.configs(profile), only)
    records = []
    bar = tqdm(configs, desc=f"{paper} [{profile}]", unit="run", disable=not progress or not configs)
    for config in bar:
        bar.set_postfix_str(config["experiment"])
        record = store.get(config)
        if record is None and run_missing:
            record = execute(config, device=device, store=store, progress=progress)
        if record is not None:
            records.append(record)
    return records
