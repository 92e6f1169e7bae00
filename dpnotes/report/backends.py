"""Which per-example gradient backend a chapter's paper-profile runs used (issue #36 item 1).

Read from the stored records' resolved specs (``train.grad_backend``, ``train.private``) and the
device of their first provenance segment; nothing is trained and no torch is imported.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

from dpnotes.report import labels

_WHAT = {"func": "`func` (torch.func per-example gradients)",
         "ghost": "`ghost` (per-example norms without per-example gradients)",
         "opacus": "`opacus` (opacus's hooks)"}


def counts(records: Iterable[dict]) -> Counter:
    """``(backend, device kind) -> runs`` over ``records``; backend ``None`` for a run without
    per-example gradients (non-private or a baseline), device kind ``cpu`` or ``cuda``."""
    out: Counter = Counter()
    for record in records:
        where = f"record {record.get('id', '?')}"
        train = record.get("spec", {}).get("train") or {}
        segments = record.get("provenance", {}).get("segments") or [{}]
        device = str(segments[0].get("device", "")).split(":")[0]
        if device not in ("cpu", "cuda"):
            raise ValueError(f"{where}: provenance device must start with 'cpu:' or 'cuda:', got {device!r}")
        backend = train.get("grad_backend", "func") if train.get("private", True) and train else None
        if backend is not None and backend not in _WHAT:
            raise ValueError(f"{where}: grad_backend must be one of {sorted(_WHAT)}, got {backend!r}")
        out[backend, device] += 1
    return out


def markdown(paper: str, records: Iterable[dict], ghost_from_seed: Mapping[str, int] | None = None) -> str:
    """One paragraph: how many of ``paper``'s paper-profile runs used each backend, on which device,
    and (``ghost_from_seed``: the paper's ``GHOST_FROM_SEED``) which new seeds run on ghost."""
    c = counts(records)
    if not c:
        return f"No paper-profile run of {paper} is stored yet."

    def runs(backend) -> str:
        parts = [f"{c[backend, d]} on {'a CPU' if d == 'cpu' else 'a GPU'}" for d in ("cpu", "cuda") if c[backend, d]]
        n = sum(c[backend, d] for d in ("cpu", "cuda"))
        return f"{n} run{'s' if n != 1 else ''} ({', '.join(parts)})"

    used = [b for b in _WHAT if c[b, "cpu"] or c[b, "cuda"]]
    lines = []
    if used:
        lines.append("Per-example gradients of the stored paper-profile runs: "
                     + "; ".join(f"{_WHAT[b]}: {runs(b)}" for b in used) + ".")
    if ghost_from_seed:
        lines.append("New seeds run on `ghost` where their experiment's stored seeds allow it (a stored record "
                     f"keeps its backend and its id; `dpnotes.experiments.{paper}.GHOST_FROM_SEED`): " + ", ".join(
                         f"`{pattern}` from seed {seed}" for pattern, seed in sorted(ghost_from_seed.items())) + ".")
    if "ghost" in used or ghost_from_seed:
        lines.append("`ghost` gives the same per-example norms and clipped sums as `func` up to float rounding "
                     "(`tests/test_train_ghost.py`, float64, every model of every paper config).")
    if c[None, "cpu"] or c[None, "cuda"]:
        lines.append(f"Without per-example gradients (non-private runs and baselines): {runs(None)}.")
    return labels.markdown(" ".join(lines))


def draws_markdown(records: Iterable[dict], draws_from_seed: Mapping[str, int]) -> str:
    """One sentence for DPlis: how its stored smoothed runs drew their K parameter perturbations
    (``method_config.draws``: ``torch`` when absent, as the seed-0 records did), and
    (``draws_from_seed``: ``dpnotes.experiments.dplis.DRAWS_FROM_SEED``) which new seeds draw
    implicitly."""
    c: Counter = Counter()
    for record in records:
        spec = record.get("spec", {})
        if spec.get("method") == "dplis":
            c[(spec.get("method_config") or {}).get("draws", "torch")] += 1
    if not c and not draws_from_seed:
        return ""
    what = {"torch": "drew all K perturbations with `torch.randn`",
            "implicit-first-layer": "drew the first layer's perturbation as its output's (implicit-first-layer, "
                                    "the same distribution; `tests/test_methods_dplis_implicit.py`)"}
    kinds = sorted(c, key=lambda kind: (kind != "torch", kind))  # the stored seeds' way first
    parts = [f"{c[kind]} {what.get(kind, f'drew them as {kind!r}')}" for kind in kinds]
    line = f"Smoothed runs stored: {'; '.join(parts) if parts else 'none'}."
    if draws_from_seed:
        line += (" New seeds of these experiments draw implicit-first-layer (`DRAWS_FROM_SEED`): " + ", ".join(
            f"`{pattern}` from seed {seed}" for pattern, seed in sorted(draws_from_seed.items())) + ".")
    return labels.markdown(line)
