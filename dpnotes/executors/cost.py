"""The cost table of a sweep (``dpnotes run --dry-run`` / ``--list``): each run's estimate and basis
from :mod:`dpnotes.experiments.run_cost` (stored records' wall times, else bench estimates, in
CPU and, where the bench has a CUDA row, GPU seconds), and the GPU-scale mark. ``estimate`` and
``reference_records`` are importable from here too (the campaign's entry points)."""

from __future__ import annotations

from dpnotes.experiments.run_cost import GPU_SCALE_HOURS, bench_seconds, estimate, gpu_scale, reference_records
from dpnotes.results import Store
from dpnotes.spec import RunSpec


def plan(specs: list[RunSpec], store: Store) -> list[str]:
    """Lines listing each run (id, stored (verified: :mod:`dpnotes.record_checks`), BAD (a file
    that fails verification, with the reason on the next line) or to run, experiment, seed, estimated CPU seconds, the
    CUDA bench estimate where one exists, basis, a GPU-scale mark) and a summary of the runs
    still to do."""
    if not specs:
        return []
    records = reference_records(specs[0].paper, specs[0].profile, store)
    found = store.scan(specs[0].paper, specs[0].profile)  # verified: a truncated or edited file is not "stored"
    verified = {r["id"] for r in found.records}
    bad = {e["id"]: e["reason"] for e in found.excluded}
    lines, todo, unknown, gpu_runs = [], 0.0, 0, 0
    for spec in specs:
        stored = spec.id in verified
        seconds, basis = estimate(spec, records)
        cuda = bench_seconds(spec, "cuda")
        if cuda is not None and "cuda" not in basis:
            basis += f"; cuda bench estimate {cuda:.0f} s"
        if not stored:
            todo += seconds or 0.0
            unknown += seconds is None
            gpu_runs += gpu_scale(seconds)
        shown = "       ?" if seconds is None else f"{seconds:8.1f}"
        status = "stored" if stored else "BAD" if spec.id in bad else "to run"
        lines.append(f"{spec.id}  {status:6}  {spec.experiment}  "
                     f"seed={spec.seed}  {shown} s  ({basis})" + ("  [gpu-scale]" if gpu_scale(seconds) else ""))
        if spec.id in bad:
            lines.append(f"  {spec.id}: its stored file is excluded ({bad[spec.id]}); move it away (and its "
                         ".sha256) to run it again")
    missing = sum(s.id not in verified for s in specs)
    lines.append(f"{len(specs)} run(s), {len(specs) - missing} stored, {missing} to run: about "
                 f"{todo:.0f} s of run time on one worker"
                 + (f" (+ {unknown} run(s) without an estimate)" if unknown else "")
                 + (f"; {gpu_runs} of them GPU-scale (over {GPU_SCALE_HOURS:g} CPU-hours each)" if gpu_runs else "")
                 + "; estimates are stored records' wall times, else the experiments' cost model or bench estimates")
    return lines
