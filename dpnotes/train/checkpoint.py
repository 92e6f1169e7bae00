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

Each checkpoint ends with the sha256 of its content (:mod:`dpnotes.digest_file`), checked before
anything is unpickled: one flipped byte is refused, not resumed from. A checkpoint written before
checkpoints carried a digest is refused too, unless ``$DPNOTES_UNDIGESTED_CHECKPOINTS=accept``
(then read weights-only as before, with a warning). The state's structure is checked before it is
restored (:func:`structure_problem`: ``model`` a string or ``plugins`` an int is named, as is a
state that does not fit the run's model or optimizer).
"""

from __future__ import annotations

import io
import os
import pickle
import re
import sys
from pathlib import Path

import torch

from dpnotes import digest_file
from dpnotes.ledger import Ledger

KEYS = ("config", "history", "step", "accepted", "stopped", "ledger", "model", "optimizer", "sample_gen",
        "noise_gen", "aux_gen", "release_gen", "torch_rng", "plugins")


GENERATORS = ("sample_gen", "noise_gen", "aux_gen", "release_gen", "torch_rng")
UNDIGESTED = "DPNOTES_UNDIGESTED_CHECKPOINTS"  # "accept": read a checkpoint without a digest (warned)


class UnsafeCheckpoint(ValueError):
    """A checkpoint holds pickled objects other than tensors and plain containers."""


def structure_problem(state) -> str | None:
    """Why ``state`` (a loaded checkpoint) is not a dpnotes checkpoint's state (None: it is):
    every key of :data:`KEYS` present and of its type."""
    if not isinstance(state, dict):
        return f"it holds a {type(state).__name__}, not a dict"
    missing = sorted(set(KEYS) - set(state))
    if missing:
        return f"missing {missing}"
    kinds = {"config": dict, "history": list, "step": int, "accepted": int, "ledger": list, "model": dict,
             "optimizer": dict, "plugins": list}
    for key, kind in kinds.items():
        if not isinstance(state[key], kind) or isinstance(state[key], bool):
            return f"{key} is a {type(state[key]).__name__}, not a {kind.__name__}"
    if state["stopped"] is not None and not isinstance(state["stopped"], str):
        return f"stopped is a {type(state['stopped']).__name__}, not a string or None"
    bad = [k for k, v in state["model"].items() if not (isinstance(k, str) and torch.is_tensor(v))]
    if bad:
        return f"model entries {bad[:3]} are not named tensors"
    if not isinstance(state["optimizer"].get("state"), dict) or not isinstance(state["optimizer"].get("param_groups"),
                                                                                list):
        return "optimizer has no state dict and param_groups list"
    for key in GENERATORS:
        if not (torch.is_tensor(state[key]) and state[key].dtype == torch.uint8):
            return f"{key} is not a generator state (a uint8 tensor)"
    if not all(isinstance(h, dict) for h in state["history"]) or not all(isinstance(p, dict) for p in state["plugins"]):
        return "history and plugins must be lists of dicts"
    return None


def _content(path: Path, fresh: str) -> bytes:
    """The checkpoint's bytes, checked against the digest they carry (:mod:`dpnotes.digest_file`)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ValueError(f"checkpoint {path} cannot be read ({exc.strerror or exc}){fresh}") from None
    try:
        return digest_file.split(data, f"checkpoint {path}")
    except digest_file.DigestError as exc:
        if "carries no content digest" in str(exc) and os.environ.get(UNDIGESTED) == "accept":
            print(f"warning: {exc}; read anyway (${UNDIGESTED}=accept)", file=sys.stderr)
            return data
        what = "cannot be read (truncated, or" if "carries no" in str(exc) else "is refused (corrupted:"
        detail = ("written before checkpoints carried a content digest: resume it anyway with "
                  f"${UNDIGESTED}=accept)" if "carries no" in str(exc)
                  else "its content does not match the sha256 it carries)")
        raise ValueError(f"checkpoint {path} {what} {detail}{fresh}") from None


def read(path: str | Path, device) -> dict:
    """The state saved in the checkpoint ``path``, read weights-only; :class:`UnsafeCheckpoint`
    for a file carrying other objects, ``ValueError`` naming the file if it is not a complete
    checkpoint (truncated, corrupted, another format)."""
    path = Path(path)
    fresh = "; delete it (and the .segments.json beside it) to start the run afresh"
    content = _content(path, fresh)
    try:
        state = torch.load(io.BytesIO(content), map_location=device, weights_only=True)
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
    wrong = structure_problem(state)
    if wrong is not None:
        raise ValueError(f"checkpoint {path} is not a dpnotes checkpoint ({wrong}){fresh}")
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
    digest_file.write(path, digest_file.torch_bytes(state))


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
    try:
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
    except (RuntimeError, KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
        raise ValueError(f"checkpoint {path} does not fit this run ({type(exc).__name__}: {first}); "
                         "delete it to start afresh") from None
    return list(state["history"])
