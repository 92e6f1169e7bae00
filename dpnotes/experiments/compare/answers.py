"""The comparison from the records: per cell (data set, model, eps) and method, the released
model's accuracy over the paired seeds, its difference to tuned DP-SGD as a paired interval, its
eps and its cost; and the chapter's one-paragraph answer.

A tuned record is admitted only if its ledger holds the tuning event (its eps then includes the
selection): :func:`compare` refuses any other with :class:`TuningNotChargedError`. Default
(untuned) records are reported beside, as the cost of tuning, never as the method's result.
"""

from __future__ import annotations

import math
import statistics

from dpnotes.experiments.compare import privacy as P
from dpnotes.experiments.compare import settings as S
from dpnotes.record import Record


class TuningNotChargedError(ValueError):
    """A tuned record whose ledger lacks the tuning event (its eps would leave the selection out)."""


def _parts(record: dict) -> dict:
    dataset, model, eps, method, kind = _split(record["spec"]["experiment"])
    return {"dataset": dataset, "model": model, "eps": eps, "method": method, "kind": kind}


def _split(experiment: str) -> tuple:
    head, method, kind = experiment.rsplit(".", 2)
    dataset, model, eps = head.split(".", 2)
    return dataset, model, float(eps.removeprefix("eps")), method, kind


def check(record: dict) -> None:
    """:class:`TuningNotChargedError` (one line) unless a tuned record's ledger holds the tuning event."""
    parts = _parts(record)
    if parts["kind"] == "tuned" and not P.has_tuning_event(record["privacy"]["ledger"]):
        raise TuningNotChargedError(
            f"record {record.get('id')} ({record['spec']['experiment']} seed {record['spec']['seed']}): its ledger "
            "has no RepeatAndSelectDpEvent, so its eps leaves the hyperparameter selection uncharged; refused")


def _interval(diffs: list[float]) -> tuple[float, float, float]:
    from scipy.stats import t

    mean = statistics.fmean(diffs)
    if len(diffs) < 2:
        return mean, math.nan, math.nan
    half = t.ppf(0.975, len(diffs) - 1) * statistics.stdev(diffs) / math.sqrt(len(diffs))
    return mean, mean - half, mean + half


def compare(records: list[dict]) -> list[dict]:
    """One row per (data set, model, eps, method) with tuned records: mean report accuracy, seeds,
    the paired difference to tuned DP-SGD (95 % t interval over the common seeds), eps under ``rdp``
    (the largest over seeds), the untuned accuracy, and the CPU/GPU seconds of a tuned run."""
    by: dict = {}
    for r in records:
        check(r)
        p = _parts(r)
        acc = Record.of(r).metric_or("analysis", {}).get("report_acc")
        by.setdefault((p["dataset"], p["model"], p["eps"], p["method"], p["kind"]), {})[r["spec"]["seed"]] = (acc, r)
    rows = []
    for (dataset, model, eps, method, kind), seeds in sorted(by.items(), key=lambda kv: (kv[0][:3], S.METHODS.index(
            kv[0][3]), kv[0][4])):
        if kind != "tuned":
            continue
        base = by.get((dataset, model, eps, "dpsgd", "tuned"), {})
        common = sorted(set(seeds) & set(base))
        diff = _interval([100 * (seeds[s][0] - base[s][0]) for s in common]) if method != "dpsgd" and common else None
        default = by.get((dataset, model, eps, method, "default"), {})
        eps_max = max(r["privacy"]["epsilon"][S.ACCOUNTANT]["epsilon"] for _, r in seeds.values())
        rows.append({"dataset": dataset, "model": model, "eps": eps, "method": method, "label": S.LABELS[method],
                     "seeds": len(seeds), "acc": 100 * statistics.fmean(a for a, _ in seeds.values()),
                     "diff": diff, "default_acc": 100 * statistics.fmean(a for a, _ in default.values()) if default
                     else None, "epsilon": eps_max,
                     "trial_bound": {Record.of(r).metric("tuning")["trial_bound"] for _, r in seeds.values()},
                     "seconds": statistics.fmean(r["provenance"]["wall_time_s"] for _, r in seeds.values()
                                                 if "provenance" in r)
                     if all("provenance" in r for _, r in seeds.values()) else None})
    return rows


def summary(records: list[dict], plan_rows: list[dict]) -> str:
    """The chapter's answer: from the rows of :func:`compare`, or, with no tuned records, what has
    not run and what it will cost (from the plan); never a number that is not in either."""
    rows = compare(records)
    cpu = [r for r in plan_rows if r["where"] == "cpu"]
    gpu = [r for r in plan_rows if r["where"] == "gpu"]
    cost = (f"The plan: {sum(r['runs'] for r in cpu)} runs ({sum(r['trials'] for r in cpu)} training runs with the "
            f"trials) on the CPU, about {sum(r['cpu_h'] for r in cpu):.0f} CPU-hours, and "
            f"{sum(r['runs'] for r in gpu)} runs queued for the GPU campaign, about "
            f"{sum(r['gpu_h'] for r in gpu):.1f} GPU-hours.")
    if not rows:
        return "Nothing has run yet: no tuned record is stored, so no method can be compared. " + cost
    out = []
    for (dataset, model, eps) in dict.fromkeys((r["dataset"], r["model"], r["eps"]) for r in rows):
        cell = [r for r in rows if (r["dataset"], r["model"], r["eps"]) == (dataset, model, eps)]
        decided = [r for r in cell if r["diff"] and not math.isnan(r["diff"][1])]
        better = [r for r in decided if r["diff"][1] > 0]
        if better:
            top = max(better, key=lambda r: r["diff"][0])
            out.append(f"{dataset} ({model}) at eps {eps:g}: {top['label']} beats tuned DP-SGD by "
                       f"{top['diff'][0]:.2f} points (95 % interval {top['diff'][1]:.2f} to {top['diff'][2]:.2f})")
        else:
            out.append(f"{dataset} ({model}) at eps {eps:g}: no method beats tuned DP-SGD "
                       f"({len(decided)} of {len(cell) - 1} compared on paired seeds)")
    return "; ".join(out) + ". " + cost
