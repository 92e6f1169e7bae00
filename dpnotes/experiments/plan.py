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

:func:`dpnotes.report.seeds_plan.propose` makes the rows from the records (run once, before a new
plan; the plan is then frozen): claims in priority order (central, headline, gains, comparisons), each with its pilot SD
(pooled over the same model, method and measurement where a claim has fewer than
:data:`THIN` seeds), ``n``, and the cost of the seeds it adds (CPU-hours on the backend its runs
use, GPU-hours from the bench); a claim is planned on the CPU while the CPU total stays within
:data:`CPU_BUDGET_H`, else queued for the GPU campaign while that stays within
:data:`GPU_BUDGET_H`, else it is "not decidable within budget" with its ``n`` and cost.
"""

from __future__ import annotations

import math
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

    out = ["# The seeds plan (dpnotes.experiments.plan): made by dpnotes.report.seeds_plan.propose() from the",
           "# records of the day, then frozen. Its commit is the preregistration of the runs it adds;",
           "# edit only to add a new plan.",
           f'fixed = "{plan.fixed}"', ""]
    for row in plan.rows:
        out.append("[[row]]")
        out += [f"{k} = {value(v)}" for k, v in asdict(row).items() if v is not None]
        out.append("")
    return "\n".join(out)
