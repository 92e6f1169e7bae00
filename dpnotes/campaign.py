"""A compute campaign: given a time budget and a number of parallel workers, pick the most
valuable paper-profile runs not yet stored that fit, and run them (``dpnotes campaign``).

Value is first the seeds plan's GPU queue (:mod:`dpnotes.experiments.plan`, tier 0), then the order
of :data:`PLAN`, the README's earlier seeds plan: the headline and comparative
claims' seeds first (DPlis Table 2/11 at the first eps column with every arm of a row under
one seed, DPIS Table 3, its raw-pixel baselines, SA-DPSGD Tables 1 and 3, LabelDP Table 4),
the audits next, then ablations, then every other paper-profile run in its paper's order.
Within one tier, lower seeds first, so that the arms of a paired comparison arrive together.

Cost is estimated per run on the target device from stored records (:mod:`dpnotes.executors.cost`):
records of the same run, experiment, or model and method on that device kind; where only the
other kind has records, their median is scaled by the measured ratio of CUDA to CPU wall time
of experiments stored on both (:func:`device_factor`). Runs without an estimate are not
picked (listed as such). The runs are packed greedily, in value order, onto ``workers``
queues whose estimated load stays within the budget; a run that does not fit is skipped and
cheaper ones behind it may still fit.

Each worker runs its queue one run after another as ``dpnotes run PAPER --profile paper
--only EXPERIMENT --seeds SEED`` subprocesses (the same code path as a user's run; records
stored atomically as each finishes, checkpoints under ``<results>/.checkpoints``), and every
run still going when the budget ends is stopped: its checkpoint stays for the next campaign
(on the same kind of device: CUDA checkpoints do not resume on a CPU). A summary
``campaign-<time>.json`` in the results folder lists what was picked, estimated and finished.
"""

from __future__ import annotations

import fnmatch
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from dpnotes.preflight import duration  # noqa: F401  (re-exported: dpnotes.campaign.duration)
from dpnotes.results import Store
from dpnotes.spec import RunSpec

# (tier, paper, experiment glob): the README's seeds plan, headline and comparative claims first.
PLAN: tuple[tuple[int, str, str], ...] = (
    (1, "labeldp", "table4.*.appb"),  # fidelity (issue #47): Table 4 on the paper's own network, GPU-only
    (1, "dpis", "*.dpsgd_decay*.rate*"),  # fidelity (issue #47): DP-SGD-Decay over the paper's printed rate range
    (1, "dplis", "table2.*.eps1_99.*"),
    (1, "dplis", "table11.*.eps1_99.*"),
    # the comparison (issue #51): its CPU part (dpnotes.experiments.compare.settings.CPU_PART) runs on the
    # CPU, last here; the rest right after the seeds plan's GPU part and the fidelity runs
    *((8, "compare", glob) for glob in ("mnist.tf-mnist-cnn.eps1.*", "mnist.tf-mnist-cnn.eps4.*",
                                        "fashion-mnist.tf-mnist-cnn.eps1.*", "fashion-mnist.tf-mnist-cnn.eps4.*")),
    (1.5, "compare", "*"),
    (2, "dpis", "*.dpis"),
    (2, "dpis", "*.dpsgd_hf"),
    (3, "dpis", "*.eps?.dpsgd"),
    (3, "dpis", "*.eps?.dpsgd_ts"),
    (3, "dpis", "*.eps?.dpsgd_decay*"),
    (4, "sadpsgd", "table1.*"),
    (4, "sadpsgd", "table3.*"),
    (5, "labeldp", "table4.*"),
    (6, "audit", "*"),
    (7, "dpis", "*"),
    (7, "dplis", "table9.*"),
)
LAST_TIER = 8  # every other paper-profile run, in its paper's config order
PAPERS = ("dplis", "dpis", "sadpsgd", "labeldp", "gdp", "audit", "compare")
DEVICE_KINDS = ("cpu", "cuda")


@dataclass
class Pick:
    """One run of a campaign: what, its value tier, its estimate on the target device and why."""

    paper: str
    experiment: str
    seed: int
    id: str
    tier: float  # an int, but 1.5 (the comparison, between the fidelity runs and DPIS Table 3)
    seconds: float | None
    basis: str
    worker: int | None = None
    chunk: bool = False
    outcome: str = "not picked"
    wall_s: float | None = None


@dataclass
class Campaign:
    """A campaign's plan: the runs picked onto each worker and those left out."""

    budget_s: float
    workers: int
    device: str
    picked: list[Pick] = field(default_factory=list)
    left: list[Pick] = field(default_factory=list)

    def load(self, worker: int) -> float:
        return sum(p.seconds for p in self.picked if p.worker == worker and not p.chunk)

    def lines(self) -> list[str]:
        """What the campaign runs, per worker, then what it leaves and why; the tiers it uses, in words."""
        out = [f"campaign: budget {duration(self.budget_s)}, {self.workers} worker(s) on {self.device}"]
        for w in range(self.workers):
            runs = [p for p in self.picked if p.worker == w]
            out.append(f"worker {w}: {len(runs)} run(s), about {duration(self.load(w))}")
            out += [f"  {p.paper} {p.experiment} seed={p.seed}  ~{duration(p.seconds)}  (tier {p.tier}; {p.basis})"
                    + ("  [chunk: stopped at the budget's end, resumes next time]" if p.chunk else "")
                    for p in runs]
        unknown = [p for p in self.left if p.seconds is None]
        too_long = [p for p in self.left if p.seconds is not None]
        out.append(f"left for later: {len(too_long)} run(s) that do not fit, about "
                   f"{duration(sum(p.seconds for p in too_long))} on one worker"
                   + (f"; {len(unknown)} without an estimate" if unknown else ""))
        used = sorted({p.tier for p in self.picked + self.left})
        out += ["tiers (lower runs first):"] + [f"  {t}: {TIERS.get(t, 'every other paper-profile run')}" for t in used]
        return out


# The value tiers in words (dpnotes campaign prints the ones it uses).
TIERS = {0: "the seeds plan's GPU queue (dpnotes plan --queue gpu): claims the CPU cannot decide in its budget",
         1: "fidelity (LabelDP Table 4 on the paper's network, DPIS's DP-SGD-Decay over the paper's rate range) and "
            "DPlis Tables 2 and 11 at the first eps column",
         2: "DPIS Table 3: DPIS and DP-SGD-HF", 3: "DPIS Table 3's raw-pixel baselines",
         1.5: "the comparison of the methods, tuning charged (beyond the papers), but its CPU part",
         4: "SA-DPSGD Tables 1 and 3", 5: "LabelDP Table 4", 6: "the audits", 7: "DPIS's ablations, DPlis Table 9",
         8: "every other paper-profile run (the comparison's CPU part among them)"}


def parse_budget(text: str) -> float:
    """Seconds in ``text``: a number with an optional unit s, m or h (``900``, ``15m``, ``1.5h``);
    ``ValueError`` naming --budget otherwise."""
    units = {"s": 1.0, "m": 60.0, "h": 3600.0}
    unit = text[-1:].lower() if text[-1:].lower() in units else "s"
    number = text[:-1] if text[-1:].lower() in units else text
    try:
        seconds = float(number) * units[unit]
    except ValueError:
        seconds = float("nan")
    if not seconds > 0 or seconds == float("inf"):
        raise ValueError(f"--budget must be a positive duration such as 900, 15m or 1.5h; got {text!r}")
    return seconds


def tier(paper: str, experiment: str) -> int:
    """The value tier of a run (0 = most valuable): 0 for the experiments of the seeds plan's GPU
    queue (:func:`dpnotes.report.seeds_plan.queue`: its rows too costly for the CPU), else the first
    :data:`PLAN` entry that matches it."""
    from dpnotes.experiments import plan

    if any(row.where == "gpu" and row.claim.startswith(paper + ".") and experiment in row.experiments
           for row in plan.current().rows):
        return 0
    for rank, name, pattern in PLAN:
        if name == paper and fnmatch.fnmatch(experiment, pattern):
            return rank
    return LAST_TIER


def _kind(record: dict) -> str:
    kinds = {s["device"].split(":")[0] for s in record["provenance"].get("segments", [])}
    return kinds.pop() if len(kinds) == 1 else "mixed"


def device_factor(records: list[dict]) -> dict[str, float]:
    """CUDA / CPU wall-time ratios: per model, the median over its experiments stored on both
    kinds of (median CUDA wall time) / (median CPU wall time), and under ``"*"`` the median
    over all such experiments; empty if none is stored on both."""
    by = {}
    for r in records:
        key = (r["spec"]["paper"], r["spec"]["model"], r["spec"]["experiment"])
        by.setdefault(key, {}).setdefault(_kind(r), []).append(r["provenance"]["wall_time_s"])
    ratios = {}
    for (_, model, _), kinds in by.items():
        if kinds.get("cuda") and kinds.get("cpu"):
            ratios.setdefault(model, []).append(statistics.median(kinds["cuda"]) / statistics.median(kinds["cpu"]))
    out = {model: statistics.median(r) for model, r in ratios.items()}
    if ratios:
        out["*"] = statistics.median(x for r in ratios.values() for x in r)
    return out


def estimate_on(spec: RunSpec, records: list[dict], device: str, factors: dict[str, float]) -> tuple[float | None, str]:
    """``(seconds or None, basis)`` for ``spec`` on ``device``, from the closest records first:
    the run's own or its experiment's records on ``device``; else those on the other device
    kind scaled by the model's CUDA / CPU ratio (:func:`device_factor`, or the median over all
    models when the model has none); else records of the same model and method, in the same
    order (:func:`dpnotes.experiments.run_cost.estimate`); else the bench estimate for
    ``device`` (:func:`dpnotes.experiments.run_cost.bench_seconds`), a CPU one scaled as above
    when the bench has no CUDA figure."""
    from dpnotes.experiments.run_cost import bench_seconds, estimate

    ratio = factors.get(spec.model, factors.get("*"))
    scale = None if ratio is None else (ratio if device == "cuda" else 1.0 / ratio)
    whose = "this model's" if spec.model in factors else "all models'"
    other = "cpu" if device == "cuda" else "cuda"

    def from_records(pool):
        seconds, basis = estimate(spec, pool) if pool else (None, "")
        return (None, basis) if basis.startswith("bench") else (seconds, basis)

    same_experiment = [r for r in records if r["spec"]["experiment"] == spec.experiment]
    for pool in (same_experiment, records):
        seconds, basis = from_records([r for r in pool if _kind(r) == device])
        if seconds is not None:
            return seconds, basis
        seconds, basis = from_records([r for r in pool if _kind(r) == other])
        if seconds is not None and scale is not None:
            return seconds * scale, f"{basis}, x {scale:.2f} ({whose} measured {device}/{other} ratio)"
    seconds = bench_seconds(spec, device)
    if seconds is not None:
        return seconds, f"bench estimate on {device}"
    cpu = bench_seconds(spec, "cpu")
    if device == "cuda" and cpu is not None and scale is not None:
        return cpu * scale, f"bench estimate on cpu, x {scale:.2f} ({whose} measured cuda/cpu ratio)"
    return None, "no stored record to go by"


def candidates(papers, device: str, store: Store, exclude=()) -> list[Pick]:
    """Every paper-profile run of ``papers`` stored neither in ``store`` nor in the committed
    results, nor matched by an ``exclude`` entry ``(paper, experiment glob)``, with its tier and
    estimate on ``device``, in value order."""
    from dpnotes.executors.local import done_seconds
    from dpnotes.experiments.run_cost import COMMITTED, reference_records
    from dpnotes.runner import specs

    committed = Store(COMMITTED) if COMMITTED.is_dir() else None
    records = [r for paper in papers for r in reference_records(paper, "paper", store)]
    factors = device_factor(records)
    out = []
    for order, paper in enumerate(papers):
        for i, spec in enumerate(specs(paper, "paper")):
            if store.has(spec) or (committed is not None and committed.has(spec)) or any(
                    paper == name and fnmatch.fnmatch(spec.experiment, glob) for name, glob in exclude):
                continue
            seconds, basis = estimate_on(spec, records, device, factors)
            done = done_seconds(store.root / ".checkpoints", spec)
            if seconds is not None and done > 0:
                seconds = max(seconds - done, 0.1 * seconds)
                basis += f"; resumes its checkpoint ({done:.0f} s done)"
            out.append((tier(paper, spec.experiment), spec.seed, order, i,
                        Pick(paper, spec.experiment, spec.seed, spec.id, tier(paper, spec.experiment),
                             seconds, basis)))
    return [p for *_, p in sorted(out, key=lambda t: t[:4])]


def plan(runs: list[Pick], *, budget_s: float, workers: int, device: str, chunks: bool = False,
         min_chunk_s: float = 60.0) -> Campaign:
    """Pack ``runs`` (in value order) onto ``workers`` queues: each run goes to the least-loaded
    queue if its estimate fits in what is left of the budget there; else it is left. With
    ``chunks``, a queue with at least ``min_chunk_s`` left then starts the most valuable run left
    that has an estimate, as a chunk: it is stopped at the budget's end and its checkpoint kept,
    so that the next campaign on this kind of device resumes it (CUDA checkpoints do not resume
    on a CPU)."""
    if workers < 1:
        raise ValueError(f"--workers must be >= 1, got {workers}")
    campaign = Campaign(budget_s, workers, device)
    loads = [0.0] * workers
    for run in runs:
        w = min(range(workers), key=loads.__getitem__)
        if run.seconds is not None and loads[w] + run.seconds <= budget_s:
            run.worker, loads[w] = w, loads[w] + run.seconds
            campaign.picked.append(run)
        else:
            campaign.left.append(run)
    if chunks:
        for w in sorted(range(workers), key=loads.__getitem__):
            if budget_s - loads[w] < min_chunk_s:
                continue
            run = next((r for r in campaign.left if r.seconds is not None), None)
            if run is None:
                break
            campaign.left.remove(run)
            run.worker, run.chunk, loads[w] = w, True, budget_s
            campaign.picked.append(run)
    return campaign


def _command(run: Pick, *, device: str, threads: int, results: Path) -> list[str]:
    return [sys.executable, "-m", "dpnotes", "run", run.paper, "--profile", "paper", "--only", run.experiment,
            "--seeds", str(run.seed), "--device", device, "--threads", str(threads), "--no-progress",
            "--yes", "--results", str(results)]  # --yes: the budget given to the campaign is the confirmation


def execute(campaign: Campaign, *, results: Path, threads: int = 1) -> Path:
    """Run ``campaign``'s queues in parallel, stopping every run still going when its budget
    ends; write and return the summary file ``<results>/campaign-<time>.json``. Each run's
    output goes to ``<results>/.campaign/<id>.log``."""
    logs = results / ".campaign"
    logs.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + campaign.budget_s
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads)}

    def worker(w: int) -> None:
        for run in [p for p in campaign.picked if p.worker == w]:
            left = deadline - time.monotonic()
            if left <= 0:
                run.outcome = "not started: budget spent"
                continue
            start = time.monotonic()
            with open(logs / f"{run.id}.log", "w") as log:
                proc = subprocess.Popen(_command(run, device=campaign.device, threads=threads, results=results),
                                        stdout=log, stderr=subprocess.STDOUT, env=env)
                try:
                    rc = proc.wait(timeout=left)
                    run.outcome = "stored" if rc == 0 else f"failed (exit {rc}; see .campaign/{run.id}.log)"
                except subprocess.TimeoutExpired:
                    proc.terminate()
                    try:
                        proc.wait(timeout=30)
                    except subprocess.TimeoutExpired:
                        proc.kill()
                        proc.wait()
                    run.outcome = "stopped at the budget's end (checkpoint kept)" + (" as planned" if run.chunk else "")
            run.wall_s = round(time.monotonic() - start, 1)

    threads_ = [threading.Thread(target=worker, args=(w,)) for w in range(campaign.workers)]
    for t in threads_:
        t.start()
    for t in threads_:
        t.join()
    summary = results / f"campaign-{time.strftime('%Y%m%dT%H%M%S')}.json"
    summary.write_text(json.dumps({**{k: v for k, v in asdict(campaign).items() if k not in ("picked", "left")},
                                   "picked": [asdict(p) for p in campaign.picked],
                                   "left": [asdict(p) for p in campaign.left]}, indent=1))
    return summary
