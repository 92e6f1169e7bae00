"""The seeds plan's reports and its proposal: the runs it still asks for (:func:`queue`), its table with
each row's status (:func:`table`, :func:`markdown`: the README's and the book's) and :func:`propose`, which
makes a plan's rows from the records (run once, before the runs it plans; :mod:`dpnotes.experiments.plan`
holds the plan itself and the rule, and the paper profiles read their seeds from it).
"""

from __future__ import annotations

import fnmatch
import math
import re
import statistics

from dpnotes.experiments.plan import (
    _OVERRIDE,
    CPU_BUDGET_H,
    GPU_BUDGET_H,
    N_MAX,
    POWER,
    THIN,
    WHERE,
    Plan,
    PlanRow,
    current,
)


def queue(where: str, store) -> list[tuple[str, str, tuple[int, ...]]]:
    """The runs the plan still asks for on ``where`` (``cpu`` or ``gpu``), in the plan's order:
    ``(paper, experiment, seeds without a record)``, each experiment once, its seeds ascending. An
    experiment's seeds below the most any CPU row plans for it are CPU work; the seeds above, up to
    the most a GPU row plans, are the GPU campaign's."""
    from dpnotes import runner

    if where not in WHERE[:2]:
        raise ValueError(f"where must be one of {WHERE[:2]}, got {where!r}")
    upto: dict[tuple[str, str], dict[str, int]] = {}
    order: list[tuple[str, str]] = []
    for row in current().rows:
        if row.where == "none":
            continue
        paper = row.claim.split(".", 1)[0]
        for e in row.experiments:
            n = upto.setdefault((paper, e), {"cpu": 0, "gpu": 0})
            n[row.where] = max(n[row.where], row.planned)
            if row.where == where and (paper, e) not in order:
                order.append((paper, e))
    specs: dict[str, list] = {}
    out = []
    for paper, e in order:
        if paper not in specs:
            specs[paper] = runner.specs(paper, "paper")
        lo, hi = (0, upto[paper, e]["cpu"]) if where == "cpu" else (upto[paper, e]["cpu"], upto[paper, e]["gpu"])
        todo = tuple(sorted(s.seed for s in specs[paper] if s.experiment == e and lo <= s.seed < hi
                            and not store.has(s)))
        if todo:
            out.append((paper, e, todo))
    return out


def _plan_commit() -> str | None:
    """The commit that added ``plan.toml`` (the preregistration), from git where the package is a checkout."""
    import subprocess
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "experiments" / "plan.toml"
    try:
        out = subprocess.run(["git", "log", "--diff-filter=A", "--format=%h %cs", "--", path.name],
                             cwd=path.parent, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    line = out.stdout.strip().splitlines()[-1:] if out.returncode == 0 else []
    return line[0].replace(" ", " on ") if line else None


def table(store) -> list[dict]:
    """The plan as rows for the README and the book: claim, pilot SD, seeds now / needed / planned,
    cost, where, and status (the planned seeds with a record: the fewest over its experiments)."""
    from dpnotes import runner

    specs: dict[str, list] = {}
    out = []
    for row in current().rows:
        paper = row.claim.split(".", 1)[0]
        if paper not in specs:
            specs[paper] = runner.specs(paper, "paper")
        done = min(sum(store.has(s) for s in specs[paper] if s.experiment == e) for e in row.experiments)
        out.append({"claim": row.claim, "priority": row.priority, "pilot SD": row.pilot_sd, "pooled": row.pooled,
                    "seeds at planning": row.now, "needed": row.needed, "planned": row.planned,
                    "CPU-h": row.cpu_h, "GPU-h": row.gpu_h, "where": row.where,
                    "status": f"{min(done, row.planned)} of {row.planned} run"})
    return out


def markdown(rows: list[dict] | None = None) -> str:
    """The committed plan as a Markdown table (the README's, without status; with ``rows`` from
    :func:`table`, the status column too), and its totals per where."""
    p = current()
    data = rows if rows is not None else [
        {"claim": r.claim, "priority": r.priority, "pilot SD": r.pilot_sd, "pooled": r.pooled,
         "seeds at planning": r.now, "needed": r.needed, "planned": r.planned, "CPU-h": r.cpu_h,
         "GPU-h": r.gpu_h, "where": r.where} for r in p.rows]
    status = rows is not None
    head = ["claim", "pilot SD", "seeds then", "needed", "planned", "CPU-h", "GPU-h", "where"] + (
        ["status"] if status else [])
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in data:
        cells = [f"`{r['claim']}`", f"{r['pilot SD']:.3g}" + (" (pooled)" if r["pooled"] else ""),
                 str(r["seeds at planning"]), "> " + str(N_MAX) if r["needed"] is None else str(r["needed"]),
                 str(r["planned"]), f"{r['CPU-h']:.2f}" if r["CPU-h"] < 1e8 else "—",
                 "—" if r["GPU-h"] is None else f"{r['GPU-h']:.2f}",
                 {"cpu": "CPU", "gpu": "GPU queue", "none": "not decidable within budget"}[r["where"]]]
        lines.append("| " + " | ".join(cells + ([r["status"]] if status else [])) + " |")
    total = {w: sum(r.cpu_h if w == "cpu" else (r.gpu_h or 0) for r in p.rows if r.where == w) for w in WHERE[:2]}
    lines.append("")
    fixed = p.fixed + (f", committed in {commit}" if status and (commit := _plan_commit()) else "")
    lines.append(f"Fixed {fixed}; {len(p.rows)} rows: {sum(r.where == 'cpu' for r in p.rows)} on the CPU "
                 f"({total['cpu']:.1f} CPU-h), {sum(r.where == 'gpu' for r in p.rows)} queued for the GPU "
                 f"({total['gpu']:.1f} GPU-h), {sum(r.where == 'none' for r in p.rows)} not decidable within "
                 f"budget (more than {N_MAX} seeds, or over {CPU_BUDGET_H:g} CPU-h and {GPU_BUDGET_H:g} GPU-h).")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------
# Proposing a plan from the records (run once, before the runs it plans).

def _pool_key(claim_id: str) -> str:
    """The model, method and measurement of a claim: its id without the eps column (and, for a
    gain, without the arm), e.g. ``dpis.table3.mnist.dpis``."""
    parts = [p for p in claim_id.split(".") if not re.fullmatch(r"eps\d.*|col\d", p)]
    if parts[-1].startswith("gain_"):
        parts[-1] = "gain"
    return ".".join(parts)


def _sd(values) -> float:
    return statistics.stdev(values) if len(values) >= 2 else float("nan")


def _candidates(paper: str, store) -> list[dict]:
    """Every planning candidate of ``paper``: training cells and gains with >= 2 seeds, and each
    comparison of a comparative statement, with its values, experiments and priority."""
    from dpnotes import claims as registry
    from dpnotes import experiments
    from dpnotes.record import Record
    from dpnotes.report.headlines import HEADLINES

    records = list(store.records(paper))
    by_id = {Record.of(r).id: Record.of(r) for r in records}
    heads = [cid for cid, _ in HEADLINES[paper].claims]
    central = set(heads[:HEADLINES[paper].central])
    claims = {c.id: c for c in registry.load(paper)}
    out = []
    for m in experiments.module(paper).measure(records):
        claim = claims[m.claim_id]
        if claim.context or claim.check or claim.value is None and claim.kind != "statement":
            continue
        exps = tuple(sorted({by_id[i].experiment for i in m.record_ids if i in by_id
                             and by_id[i].profile == "paper"}))
        if not exps:
            continue
        named = any(fnmatch.fnmatchcase(m.claim_id, pattern) for pattern in NAMED)
        if m.comparisons:
            priority = ("central comparison" if m.claim_id in central else
                        "headline comparison" if m.claim_id in heads else "comparison")
        else:
            priority = ("central" if m.claim_id in central else "headline" if m.claim_id in heads or named else
                        "gain" if m.kind == "gain" else "cell")
        numeric = [v for v in m.values if isinstance(v, (int, float)) and not isinstance(v, bool)]
        if m.kind in ("training", "gain") and len(numeric) == len(m.values) >= 2 and m.seeds is None:
            out.append({"claim": m.claim_id, "kind": m.kind, "values": numeric, "experiments": exps,
                        "priority": priority, "unit": claim.unit, "p": claim.number,
                        "margin": _margin(claim, m.kind)})
        for label, values in m.comparisons:
            if len(values) >= 2 and priority != "comparison":
                out.append({"claim": f"{m.claim_id}[{label}]", "kind": "comparison", "values": list(values),
                            "experiments": exps, "priority": priority, "unit": "difference", "p": None,
                            "margin": None})
    return out


def _margin(claim, kind: str) -> float:
    from dpnotes.report.verdicts import gain_margin

    return gain_margin(claim) if kind == "gain" else claim.tolerance


def _needed(c: dict, sd: float) -> int | None:
    """Seeds at which candidate ``c`` is decided with probability POWER, for the paper's value and
    our current mean (a comparison: its sign, for our current mean)."""
    from dpnotes.report.power import seeds_needed

    mean = statistics.fmean(c["values"])
    if c["kind"] == "comparison":  # decided = the interval excludes zero: the equivalence rule around a huge margin
        big = 1e6 * (abs(mean) + sd + 1)
        return seeds_needed(big, big, sd, [mean], power=POWER, n_max=N_MAX)
    return seeds_needed(c["p"], c["margin"], sd, [c["p"], mean], power=POWER, n_max=N_MAX, sign=c["kind"] == "gain")


def _cost(paper: str, experiment: str, store) -> tuple[float | None, float | None]:
    """(CPU seconds, GPU seconds) of one more seed of ``experiment``: the median wall time of its
    CPU records (else the cost model), and the CUDA bench figure (else its CUDA records)."""
    from dpnotes import runner
    from dpnotes.experiments import run_cost

    specs = [s for s in runner.specs(paper, "paper") if s.experiment == experiment]
    if not specs:
        return None, None
    spec = max(specs, key=lambda s: s.seed)  # the backend of the latest seeds
    records = [r for r in store.records(paper) if r["spec"]["experiment"] == experiment]
    cpu_walls = [r["provenance"]["wall_time_s"] for r in records if r["spec"].get("train", {}).get("grad_backend")
                 == spec.train.get("grad_backend") and all(s["device"].startswith("cpu")
                                                           for s in r["provenance"].get("segments", []))]
    cpu = statistics.median(cpu_walls) if cpu_walls else run_cost.estimate(spec, records)[0]
    gpu = run_cost.bench_seconds(spec, "cuda")
    if gpu is None:
        walls = [r["provenance"]["wall_time_s"] for r in records if any(
            s["device"].startswith("cuda") for s in r["provenance"].get("segments", []))]
        gpu = statistics.median(walls) if walls else None
    return cpu, gpu


# Planning order: the central claims' cells and gains, the headline ones (and the tables the issue names:
# SA-DPSGD Table 1, DPIS Table 3's DPIS and DP-SGD-HF cells), then the central comparisons, the headline
# ones, the other gains. Cells of no headline only lend their SDs to the pools.
ORDER = ("central", "headline", "central comparison", "headline comparison", "gain", "comparison", "cell")
NAMED = ("sadpsgd.table1.*", "dpis.table3.*.dpis", "dpis.table3.*.dpsgd_hf")


def propose(store, fixed: str, papers=None) -> Plan:
    """A plan from the records in ``store`` (see the module docstring); ``fixed`` its date. The
    paper profiles' own seeds (before any plan) are planned already: a row costs only the seeds it
    adds beyond them and beyond the rows above it, and plans at least them."""
    _OVERRIDE.append(Plan("", ()))
    try:
        return _propose(store, fixed, papers)
    finally:
        _OVERRIDE.pop()


def _profile_counts(paper: str) -> dict[str, int]:
    from dpnotes import runner

    out: dict[str, int] = {}
    for spec in runner.specs(paper, "paper"):
        out[spec.experiment] = out.get(spec.experiment, 0) + 1
    return out


def _propose(store, fixed: str, papers) -> Plan:
    from dpnotes.claims import PAPERS

    candidates = [c | {"paper": p} for p in (papers or PAPERS) for c in _candidates(p, store)]
    pools: dict[str, list] = {}
    for c in candidates:
        if c["kind"] != "comparison":
            pools.setdefault(_pool_key(c["claim"]), []).append(c["values"])
    candidates = [c for c in candidates if c["priority"] not in ("cell", "comparison")]  # pilots only
    candidates.sort(key=lambda c: ORDER.index(c["priority"]))
    profile = {(p, e): n for p in {c["paper"] for c in candidates} for e, n in _profile_counts(p).items()}
    on_cpu: dict[tuple[str, str], int] = {}  # (paper, experiment) -> seeds the CPU rows above plan
    on_any: dict[tuple[str, str], int] = {}  # the same, CPU or GPU rows
    costs: dict[tuple[str, str], tuple] = {}
    cpu_total = gpu_total = 0.0
    rows = []
    for c in candidates:
        own = _sd(c["values"])
        pool = pools.get(_pool_key(c["claim"]), []) if c["kind"] != "comparison" else []
        dof = sum(len(v) - 1 for v in pool)
        pooled = len(c["values"]) < THIN and len(pool) > 1 and dof > len(c["values"]) - 1
        sd = math.sqrt(sum((len(v) - 1) * _sd(v) ** 2 for v in pool) / dof) if pooled else own
        now = len(c["values"])
        needed = _needed(c, sd)
        keys = [(c["paper"], e) for e in c["experiments"]]
        for k in keys:
            if k not in costs:
                costs[k] = _cost(*k, store)

        def plan_on(done: dict, n: int, column: int) -> tuple[dict, float | None]:
            """Seeds per experiment if the row asks for n on top of ``done`` (never below the profile),
            and their cost (column 0: CPU-hours, 1: GPU-hours; None: no figure)."""
            targets = {k: max(done.get(k, 0), profile.get(k, 0), now, n) for k in keys}
            total = 0.0
            for k in keys:
                per = costs[k][column]
                extra = targets[k] - max(done.get(k, 0), now)
                if extra and per is None:
                    return targets, None
                total += extra * (per or 0) / 3600
            return targets, total

        n = needed or N_MAX  # the seeds it would take (N_MAX where more would not do)
        cpu_targets, add_cpu = plan_on(on_cpu, n, 0)
        gpu_targets, add_gpu = plan_on(on_any, n, 1)
        if needed is None:
            where = "none"
        elif add_cpu is not None and (add_cpu == 0 or cpu_total + add_cpu <= CPU_BUDGET_H):
            where, cpu_total = "cpu", cpu_total + add_cpu
            on_cpu.update(cpu_targets)
            on_any.update({k: max(on_any.get(k, 0), v) for k, v in cpu_targets.items()})
        elif add_gpu is not None and gpu_total + add_gpu <= GPU_BUDGET_H:
            where, gpu_total = "gpu", gpu_total + add_gpu
            on_any.update(gpu_targets)
        else:
            where = "none"
        final = cpu_targets if where == "cpu" else gpu_targets if where == "gpu" else {
            k: max(on_any.get(k, 0), profile.get(k, 0), now) for k in keys}
        target = min(final.values())  # the paired seeds its verdict will rest on
        mean = statistics.fmean(c["values"])
        rows.append(PlanRow(
            claim=c["claim"], experiments=c["experiments"], priority=c["priority"], unit=c["unit"],
            pilot_sd=float(sd), pooled=pooled, now=now, needed=needed, planned=target,
            cpu_h=round(add_cpu, 3) if add_cpu is not None else 1e9,
            gpu_h=None if add_gpu is None else round(add_gpu, 3), where=where,
            means=(mean,) if c["p"] is None else (float(c["p"]), mean)))
    return Plan(fixed, tuple(rows))
