"""The seeds plan: how many seeds each experiment of a paper profile gets, fixed before its runs.

Three seeds decide few of the papers' claims: a 95 % Student-t interval over 3 seeds is the mean
+- 2.48 seed SDs. The plan gives each central or headline training claim, each gain and each central
comparison the number of seeds ``n`` at which its verdict (:mod:`dpnotes.report.verdicts`) is decided
with probability >= :data:`POWER` both if the paper's value is true and if our current mean is
(:func:`dpnotes.report.power.seeds_needed`), from the seeds we have: the pilot. Its rows are data,
``plan.toml`` beside this module; the commit that adds a row is its preregistration (git history
shows it before the runs it plans). The paper profiles read their seeds from it (:func:`seeds`), so
a verdict uses exactly the planned seeds (fewer read inconclusive, ``dpnotes.report``) and never more:
adding seeds until a claim comes out is seed-hacking (Bao and Bindschaedler, ACSAC 2024).

:func:`propose` makes the rows from the records (run once, before a new plan; the plan is then
frozen): claims in priority order (central, headline, gains, comparisons), each with its pilot SD
(pooled over the same model, method and measurement where a claim has fewer than
:data:`THIN` seeds), ``n``, and the cost of the seeds it adds (CPU-hours on the backend its runs
use, GPU-hours from the bench); a claim is planned on the CPU while the CPU total stays within
:data:`CPU_BUDGET_H`, else queued for the GPU campaign while that stays within
:data:`GPU_BUDGET_H`, else it is "not decidable within budget" with its ``n`` and cost.
"""

from __future__ import annotations

import fnmatch
import math
import re
import statistics
import tomllib
from dataclasses import asdict, dataclass
from functools import lru_cache
from importlib import resources

POWER = 0.8  # the probability of a decided verdict the plan asks for
N_MAX = 30  # more seeds than this per experiment are not planned (not decidable within budget)
THIN = 5  # a claim with fewer seeds borrows the pooled SD of its model, method and measurement
CPU_BUDGET_H = 30.0  # CPU-hours the plan may add on the development machine's 2 cores
GPU_BUDGET_H = 3.0  # GPU-hours it may queue for the campaign (about 12 loans of 15 minutes)
WHERE = ("cpu", "gpu", "none")


@dataclass(frozen=True)
class PlanRow:
    """One planned claim (or one comparison of a comparative claim: ``claim`` then ends in
    ``[label]``): its runs, pilot, planned seeds, their cost and where they run."""

    claim: str
    experiments: tuple[str, ...]  # the experiments whose seeds it plans
    priority: str  # one of ORDER
    unit: str | None
    pilot_sd: float  # the SD of one seed's value (or paired difference) the plan assumes
    pooled: bool  # whether pilot_sd is pooled over the claim's model, method and measurement
    now: int  # seeds it had when planned
    needed: int | None  # seeds at which it is decided with probability POWER (None: not within N_MAX)
    planned: int  # seeds the plan gives its experiments
    cpu_h: float  # CPU-hours of the seeds it adds (beyond rows above it)
    gpu_h: float | None  # GPU-hours of the same (None: no GPU figure)
    where: str  # cpu | gpu | none (not decidable within budget)
    means: tuple[float, ...]  # the true means it was planned for: the paper's value, our current mean

    def __post_init__(self):
        if self.where not in WHERE:
            raise ValueError(f"{self.claim}: where must be one of {WHERE}, got {self.where!r}")
        if not (self.pilot_sd >= 0 and math.isfinite(self.pilot_sd)) or self.planned < self.now:
            raise ValueError(f"{self.claim}: pilot_sd must be finite >= 0 and planned >= now")


@dataclass(frozen=True)
class Plan:
    """The committed plan: its rows and when it was fixed (the commit is in git history)."""

    fixed: str  # the date the plan was fixed (ISO), before any of its new runs
    rows: tuple[PlanRow, ...]

    def seeds(self, paper: str, experiment: str) -> int | None:
        """The seeds planned for ``experiment`` of ``paper`` (None: not planned here)."""
        ns = [r.planned for r in self.rows if r.where != "none" and r.claim.startswith(paper + ".")
              and experiment in r.experiments]
        return max(ns) if ns else None


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
    lines.append(f"Fixed {p.fixed}; {len(p.rows)} rows: {sum(r.where == 'cpu' for r in p.rows)} on the CPU "
                 f"({total['cpu']:.1f} CPU-h), {sum(r.where == 'gpu' for r in p.rows)} queued for the GPU "
                 f"({total['gpu']:.1f} GPU-h), {sum(r.where == 'none' for r in p.rows)} not decidable within "
                 f"budget (more than {N_MAX} seeds, or over {CPU_BUDGET_H:g} CPU-h and {GPU_BUDGET_H:g} GPU-h).")
    return "\n".join(lines)


def _path():
    return resources.files(__package__) / "plan.toml"


@lru_cache(maxsize=1)
def load() -> Plan:
    """The committed plan (``plan.toml``), checked."""
    path = _path()
    if not path.is_file():
        return Plan("", ())
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    rows = []
    for entry in data.get("row", []):
        entry = dict(entry)
        entry["experiments"] = tuple(entry["experiments"])
        entry["means"] = tuple(entry["means"])
        entry.setdefault("gpu_h", None)
        entry.setdefault("needed", None)
        entry.setdefault("unit", None)
        rows.append(PlanRow(**entry))
    return Plan(str(data.get("fixed", "")), tuple(rows))


_OVERRIDE: list[Plan] = []  # propose() reads the profiles without any plan


def current() -> Plan:
    """The plan the profiles follow: the committed one (or none, while :func:`propose` runs)."""
    return _OVERRIDE[-1] if _OVERRIDE else load()


def seeds(paper: str, experiment: str, default) -> tuple[int, ...]:
    """The seeds of ``experiment`` in ``paper``'s paper profile: ``default`` (the profile's own),
    extended to ``0 .. n - 1`` where the plan gives it ``n`` seeds."""
    n = current().seeds(paper, experiment)
    return tuple(sorted(set(default) | set(range(n or 0))))


def extend(paper: str, configs: list[dict]) -> list[dict]:
    """``paper``'s paper-profile ``configs`` with the seeds the plan adds: for each planned
    experiment, copies of its config of the highest seed (so the backend and draws its latest seeds
    use) with ``seed`` (and ``train.seed``) set to each planned seed it lacks, appended in order."""
    have: dict[str, dict[int, dict]] = {}
    for c in configs:
        have.setdefault(c["experiment"], {})[c["seed"]] = c
    extra = []
    for experiment, by_seed in have.items():
        template = by_seed[max(by_seed)]
        for seed in seeds(paper, experiment, tuple(by_seed)):
            if seed not in by_seed:
                new = {**template, "seed": seed}
                if isinstance(template.get("train"), dict) and "seed" in template["train"]:
                    new["train"] = {**template["train"], "seed": seed}
                extra.append(new)
    return list(configs) + sorted(extra, key=lambda c: (c["seed"], [e for e in have].index(c["experiment"])))


def dumps(plan: Plan) -> str:
    """``plan`` as the TOML of ``plan.toml``."""
    def value(v):
        if v is None:
            return None
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, str):
            return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
        if isinstance(v, float):
            return repr(round(v, 6))
        if isinstance(v, (tuple, list)):
            return "[" + ", ".join(value(x) for x in v) + "]"
        return str(v)

    out = ["# The seeds plan (dpnotes.experiments.plan): made by plan.propose() from the records of the day,",
           "# then frozen. Its commit is the preregistration of the runs it adds; edit only to add a new plan.",
           f'fixed = "{plan.fixed}"', ""]
    for row in plan.rows:
        out.append("[[row]]")
        out += [f"{k} = {value(v)}" for k, v in asdict(row).items() if v is not None]
        out.append("")
    return "\n".join(out)


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
