"""Per-epoch checkpoints for exact resumption.

A checkpoint holds the model, optimizer, the four generators (sampling, noise, plug-ins,
releases), the global torch RNG, step counters, the privacy ledger, plug-in states and the
history so far (functions take the loop's ``TrainContext``; this module does not import the
loop, which imports it). It is written to
a temporary file in the same folder and moved into place with ``os.replace``, so a run killed
while saving keeps the previous checkpoint intact.

Checkpoints hold only tensors and plain containers (dicts, lists, tuples, str, numbers, None)
and are read with ``torch.load(..., weights_only=True)``: a file carrying any other pickled
object is refused (:class:`UnsafeCheckpoint`) rather than run (whoever can write a results
store, e.g. a shared file system, must not be able to run code in the next process that
resumes from it). A truncated or corrupted one is refused with its path named.
"""

from __future__ import annotations

import os
import pickle
import re
import tempfile
from pathlib import Path

import torch

from dpnotes.ledger import Ledger

KEYS = ("config", "history", "step", "accepted", "stopped", "ledger", "model", "optimizer", "sample_gen",
        "noise_gen", "aux_gen", "release_gen", "torch_rng", "plugins")


class UnsafeCheckpoint(ValueError):
    """A checkpoint holds pickled objects other than tensors and plain containers."""


def read(path: str | Path, device) -> dict:
    """The state saved in the checkpoint ``path``, read weights-only; :class:`UnsafeCheckpoint`
    for a file carrying other objects, ``ValueError`` naming the file if it is not a complete
    checkpoint (truncated, corrupted, another format)."""
    path = Path(path)
    fresh = "; delete it (and the .segments.json beside it) to start the run afresh"
    try:
        state = torch.load(path, map_location=device, weights_only=True)
    except pickle.UnpicklingError as exc:
        if "weights only" in str(exc).lower():
            found = re.search(r"GLOBAL ([\w.]+)", str(exc))
            what = f" (e.g. {found.group(1)})" if found else ""
            raise UnsafeCheckpoint(f"checkpoint {path} holds pickled objects other than tensors and plain "
                                   f"containers{what}; refused: loading it could run code{fresh}") from None
        raise ValueError(f"checkpoint {path} cannot be read (corrupted: {exc}){fresh}") from None
    except (RuntimeError, OSError, EOFError, ValueError, KeyError, IndexError) as exc:
        first = str(exc).split(". ")[0].splitlines()[0][:160] if str(exc).strip() else ""
        raise ValueError(f"checkpoint {path} cannot be read (truncated or corrupted: "
                         f"{type(exc).__name__}: {first}){fresh}") from None
    if not isinstance(state, dict) or set(KEYS) - set(state):
        raise ValueError(f"checkpoint {path} is not a dpnotes checkpoint (missing "
                         f"{sorted(set(KEYS) - set(state)) if isinstance(state, dict) else 'everything'}){fresh}")
    bad = [k for k, v in state["model"].items() if torch.is_tensor(v) and v.is_floating_point()
           and not bool(torch.isfinite(v).all())]
    if bad:  # written before the loop stopped at non-finite parameters: resuming would train on NaN
        raise ValueError(f"checkpoint {path} holds non-finite model parameters ({', '.join(bad)}){fresh}")
    return state


def save(path: str | Path, ctx: "TrainContext", history: list[dict]) -> None:
    """Write the state after ``len(history)`` epochs to ``path`` atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    state = {
        "config": ctx.config.to_dict(),
        "history": history,
        "step": ctx.step,
        "accepted": ctx.accepted,
        "stopped": ctx.stopped,
        "ledger": ctx.ledger.to_json(),
        "model": ctx.model.state_dict(),
        "optimizer": ctx.optimizer.state_dict(),
        "sample_gen": ctx.sample_gen.get_state(),
        "noise_gen": ctx.noise_gen.get_state(),
        "aux_gen": ctx.aux_gen.get_state(),
        "release_gen": ctx.release_gen.get_state(),
        "torch_rng": torch.get_rng_state(),
        "plugins": [p.state_dict() for p in ctx.plugins],
    }
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        torch.save(state, tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def load(path: str | Path, ctx: "TrainContext") -> list[dict]:
    """Restore ``ctx`` from ``path``; return the history saved with it.

    Raises ``ValueError`` if the checkpoint was written by a run with another config or
    another number of plug-ins, or cannot be read (:func:`read`).
    """
    state = read(path, ctx.device)
    if state["config"] != ctx.config.to_dict():
        changed = sorted(k for k, v in ctx.config.to_dict().items() if state["config"].get(k) != v)
        raise ValueError(f"checkpoint {path} belongs to a run with another config "
                         f"(differs in {changed}); delete it to start afresh")
    if len(state["plugins"]) != len(ctx.plugins):
        raise ValueError(f"checkpoint {path} was written with {len(state['plugins'])} plug-ins, "
                         f"this run has {len(ctx.plugins)}")
    ctx.model.load_state_dict(state["model"])
    ctx.optimizer.load_state_dict(state["optimizer"])
    ctx.sample_gen.set_state(state["sample_gen"].cpu())
    ctx.noise_gen.set_state(state["noise_gen"].cpu())
    ctx.aux_gen.set_state(state["aux_gen"].cpu())
    ctx.release_gen.set_state(state["release_gen"].cpu())
    torch.set_rng_state(state["torch_rng"].cpu())
    ctx.step, ctx.accepted, ctx.stopped = state["step"], state["accepted"], state["stopped"]
    ctx.ledger = Ledger.from_json(state["ledger"])
    ctx.epoch = len(state["history"])
    for plugin, s in zip(ctx.plugins, state["plugins"]):
        plugin.load_state_dict(s)
    return list(state["history"])
