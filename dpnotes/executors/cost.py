"""Estimated cost of a sweep's runs, from the wall times of stored records (``dpnotes run
--dry-run``).

A run's estimate is, in order: the wall time of its own stored record; the median wall time
of stored records of the same paper, profile and experiment (other seeds, older specs); the
median of those of the same paper, profile, model and method; the experiments module's own cost
model where it has one (``estimate_seconds(spec)``, e.g. the audit study's, scaled from timed
steps); else unknown. The records come
from the sweep's store and from the records committed with dpnotes (``<checkout>/results``),
so a fresh store gets estimates too. They are wall times of one run on the machine that made
each record (its provenance names the device; the basis says cpu or cuda), not a benchmark of
this one.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from pathlib import Path

from dpnotes import experiments
from dpnotes.results import Store
from dpnotes.spec import RunSpec

COMMITTED = Path(__file__).resolve().parents[2] / "results"


def reference_records(paper: str, profile: str, store: Store) -> list[dict]:
    """Stored records of ``paper`` at ``profile`` in ``store`` and in the committed results."""
    out = {}
    for root in (store.root, COMMITTED):
        if root.is_dir():
            for record in Store(root).records(paper, profile):
                out.setdefault(record["id"], record)
    return list(out.values())


def estimate(spec: RunSpec, records: Iterable[dict]) -> tuple[float | None, str]:
    """``(seconds or None, basis)`` for one run of ``spec`` (see the module docstring)."""
    records = list(records)
    for basis, same in (("its record", lambda r: r["id"] == spec.id),
                        ("same experiment", lambda r: r["spec"]["experiment"] == spec.experiment),
                        ("same model and method",
                         lambda r: (r["spec"]["model"], r["spec"]["method"]) == (spec.model, spec.method))):
        found = [r for r in records if same(r)]
        if found:
            kinds = sorted({s["device"].split(":")[0] for r in found for s in r["provenance"].get("segments", [])})
            return (statistics.median(r["provenance"]["wall_time_s"] for r in found),
                    f"{basis}, {len(found)} record(s)" + (f" on {'/'.join(kinds)}" if kinds else ""))
    model = getattr(experiments.module(spec.paper), "estimate_seconds", None)
    if model is not None:
        return float(model(spec)), "cost model of the experiments (no record yet), one CPU thread"
    return None, "no stored record to go by"


def plan(specs: list[RunSpec], store: Store) -> list[str]:
    """Lines listing each run (id, stored or not, experiment, seed, estimated seconds, basis)
    and a summary of the runs still to do."""
    if not specs:
        return []
    records = reference_records(specs[0].paper, specs[0].profile, store)
    lines, todo, unknown = [], 0.0, 0
    for spec in specs:
        stored = store.has(spec)
        seconds, basis = estimate(spec, records)
        if not stored:
            todo += seconds or 0.0
            unknown += seconds is None
        shown = "       ?" if seconds is None else f"{seconds:8.1f}"
        lines.append(f"{spec.id}  {'stored' if stored else 'to run':6}  {spec.experiment}  "
                     f"seed={spec.seed}  {shown} s  ({basis})")
    missing = sum(not store.has(s) for s in specs)
    lines.append(f"{len(specs)} run(s), {len(specs) - missing} stored, {missing} to run: about "
                 f"{todo:.0f} s of run time on one worker"
                 + (f" (+ {unknown} run(s) without an estimate)" if unknown else "")
                 + "; estimates are stored records' wall times, else the experiments' cost model")
    return lines
