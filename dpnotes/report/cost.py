"""What the stored runs cost: CPU core-hours and GPU-hours per paper, profile, seed and judged claim.

From stored records only, nothing is trained. A record's provenance lists its segments (one per
resumed part of the run, :mod:`dpnotes.provenance`), each with its wall time ``wall_s`` and the
device it ran on, ``"cpu: <machine>, <n> threads"`` or ``"cuda: <gpu name>"``:

* a CPU segment costs ``wall_s * n`` core-seconds (its torch threads counted as busy cores: an
  upper bound where a thread waited) and ``wall_s`` CPU wall-seconds;
* a CUDA segment costs ``wall_s`` GPU-seconds (the host threads that fed it are not counted).

Per claim: the records behind a judged claim are the scoreboard's evidence ids of every claim
whose verdict is not ``not_run``. A record behind several claims counts twice over:

* ``full``: in full for each claim (what re-running that claim's evidence alone would cost);
  these do not add up to the total;
* ``share``: split equally among the claims it backs; the shares of all claims add up to the
  cost of the records behind verdicts.

Records behind no verdict (stale specs, quick-profile runs the chapters only show, runs of
claims whose other runs are missing) are counted per paper and profile but under no claim.
"""

from __future__ import annotations

import re
import statistics
from collections import defaultdict
from collections.abc import Iterable

_CPU = re.compile(r"^cpu: .*, (\d+) threads?$")
_CUDA = re.compile(r"^cuda: .+$")
KEYS = ("runs", "cpu_core_h", "cpu_wall_h", "gpu_h")


def segment_cost(segment: dict, where: str) -> dict[str, float]:
    """``{cpu_core_h, cpu_wall_h, gpu_h}`` of one provenance segment (module docstring); ``where``
    names the record in errors."""
    device, wall = segment.get("device"), segment.get("wall_s")
    if isinstance(wall, bool) or not isinstance(wall, (int, float)) or not 0 <= wall < float("inf"):
        raise ValueError(f"{where}: segment wall_s must be a finite number >= 0, got {wall!r}")
    hours = wall / 3600
    cpu = _CPU.match(device) if isinstance(device, str) else None
    if cpu:
        threads = int(cpu.group(1))
        if threads < 1:
            raise ValueError(f"{where}: segment device {device!r} names {threads} threads, expected >= 1")
        return {"cpu_core_h": hours * threads, "cpu_wall_h": hours, "gpu_h": 0.0}
    if isinstance(device, str) and _CUDA.match(device):
        return {"cpu_core_h": 0.0, "cpu_wall_h": 0.0, "gpu_h": hours}
    raise ValueError(f"{where}: segment device must be 'cpu: <machine>, <n> threads' or 'cuda: <name>', "
                     f"got {device!r}")


def record_cost(record: dict) -> dict[str, float]:
    """``{runs: 1, cpu_core_h, cpu_wall_h, gpu_h}`` of one record: the sum over its segments."""
    where = f"record {record.get('id', '?')}"
    segments = record.get("provenance", {}).get("segments")
    if not isinstance(segments, list) or not segments:
        raise ValueError(f"{where}: provenance.segments must be a non-empty list")
    out = {"runs": 1, "cpu_core_h": 0.0, "cpu_wall_h": 0.0, "gpu_h": 0.0}
    for seg in segments:
        if not isinstance(seg, dict):
            raise ValueError(f"{where}: every provenance segment must be an object, got {seg!r}")
        for key, value in segment_cost(seg, where).items():
            out[key] += value
    return out


def _add(total: dict, cost: dict, weight: float = 1) -> None:
    for key in KEYS:
        total[key] = total.get(key, 0) + (cost[key] if weight == 1 else weight * cost[key])


def _rows(groups: dict[tuple, dict], names: tuple[str, ...]) -> list[dict]:
    return [{**dict(zip(names, key)), **{k: total.get(k, 0) for k in KEYS}} for key, total in sorted(groups.items())]


def costs(records: Iterable[dict], claims: Iterable[dict] = ()) -> dict[str, list[dict]]:
    """The cost tables of ``records`` (stored run records of any papers and profiles):

    ``by_profile`` one row per (paper, profile); ``by_seed`` per (paper, profile, seed);
    ``by_claim`` one row per judged claim of ``claims`` (scoreboard rows: ``id``, ``paper``,
    ``verdict``, ``evidence``), with ``full`` and ``share`` costs (module docstring); ``by_paper``
    per paper with judged claims: how many (``claims``) and the records behind them, each once. A claim's
    evidence id that names no record in ``records`` is an error (the scoreboard read another store).
    """
    by_id, by_profile, by_seed = {}, defaultdict(dict), defaultdict(dict)
    for record in records:
        spec, cost = record.get("spec"), record_cost(record)
        if not (isinstance(spec, dict) and isinstance(spec.get("paper"), str) and isinstance(spec.get("profile"), str)
                and isinstance(spec.get("seed"), int) and not isinstance(spec.get("seed"), bool)):
            raise ValueError(f"record {record.get('id', '?')}: spec must name its paper, profile (strings) and seed "
                             "(an integer)")
        if record.get("id") in by_id:
            raise ValueError(f"record {record['id']} appears twice")
        by_id[record.get("id")] = cost
        _add(by_profile[(spec.get("paper"), spec.get("profile"))], cost)
        _add(by_seed[(spec.get("paper"), spec.get("profile"), spec.get("seed"))], cost)
    judged = [c for c in claims if c["verdict"] != "not_run" and isinstance(c["evidence"], list) and c["evidence"]]
    backs = defaultdict(int)
    for claim in judged:
        for rid in dict.fromkeys(claim["evidence"]):
            if rid not in by_id:
                raise ValueError(f"claim {claim['id']}: evidence record {rid} is not in the store")
            backs[rid] += 1
    by_claim = []
    for claim in judged:
        full, share = {}, {}
        for rid in dict.fromkeys(claim["evidence"]):
            _add(full, by_id[rid])
            _add(share, by_id[rid], 1 / backs[rid])
        by_claim.append({"claim": claim["id"], "paper": claim["paper"], "verdict": claim["verdict"],
                         "full": full, "share": share})
    behind, by_paper, claims_of = {}, defaultdict(dict), defaultdict(int)
    for rid in backs:
        _add(behind, by_id[rid])
    for claim in judged:
        claims_of[claim["paper"]] += 1
    for paper in claims_of:  # each record once, behind however many of the paper's claims
        for rid in dict.fromkeys(r for c in judged if c["paper"] == paper for r in c["evidence"]):
            _add(by_paper[paper], by_id[rid])
    return {"by_profile": _rows(by_profile, ("paper", "profile")),
            "by_seed": _rows(by_seed, ("paper", "profile", "seed")),
            "by_claim": by_claim,
            "by_paper": [{"paper": paper, "claims": n, **{k: by_paper[paper][k] for k in KEYS}}
                         for paper, n in claims_of.items()],
            "behind_verdicts": {k: behind.get(k, 0) for k in KEYS}}


def _h(value: float) -> str:
    return f"{value:.2f}"


def markdown(tables: dict[str, list[dict]], *, claims: bool = False) -> str:
    """The tables of :func:`costs` as Markdown (hours to two decimals): per paper and profile, per
    seed, per paper the claims judged from runs; with ``claims`` also one row per judged claim."""
    lines = ["| paper | profile | runs | CPU core-h | CPU wall-h | GPU-h |", "|---|---|---:|---:|---:|---:|"]
    lines += [f"| {r['paper']} | {r['profile']} | {r['runs']} | {_h(r['cpu_core_h'])} | {_h(r['cpu_wall_h'])} | "
              f"{_h(r['gpu_h'])} |" for r in tables["by_profile"]]
    lines += ["", "| paper | profile | seed | runs | CPU core-h | GPU-h |", "|---|---|---:|---:|---:|---:|"]
    lines += [f"| {r['paper']} | {r['profile']} | {r['seed']} | {r['runs']} | {_h(r['cpu_core_h'])} | "
              f"{_h(r['gpu_h'])} |" for r in tables["by_seed"]]
    b = tables["behind_verdicts"]
    lines += ["", f"Records behind verdicts: {b['runs']} runs, {_h(b['cpu_core_h'])} CPU core-h, "
              f"{_h(b['gpu_h'])} GPU-h.", "Claims judged from runs, per paper: the records behind its verdicts "
              "(each once) and their hours,", "per claim judged (those hours / claims) and, in full (all of one "
              "claim's records), the median and largest claim:", "",
              "| paper | claims | records | CPU core-h | GPU-h | CPU core-h / claim | GPU-h / claim | "
              "CPU core-h full: median | max |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for row in tables["by_paper"]:
        full = sorted(c["full"]["cpu_core_h"] for c in tables["by_claim"] if c["paper"] == row["paper"])
        n = row["claims"]
        lines.append(f"| {row['paper']} | {n} | {row['runs']} | {_h(row['cpu_core_h'])} | {_h(row['gpu_h'])} | "
                     f"{_h(row['cpu_core_h'] / n)} | {_h(row['gpu_h'] / n)} | {_h(statistics.median(full))} | "
                     f"{_h(full[-1])} |")
    if claims:
        lines += ["", "Per judged claim:", "",
                  "| claim | verdict | runs | CPU core-h full | CPU core-h share | GPU-h full | GPU-h share |",
                  "|---|---|---:|---:|---:|---:|---:|"]
        lines += [f"| {c['claim']} | {c['verdict']} | {c['full']['runs']} | {_h(c['full']['cpu_core_h'])} | "
                  f"{_h(c['share']['cpu_core_h'])} | {_h(c['full']['gpu_h'])} | {_h(c['share']['gpu_h'])} |"
                  for c in tables["by_claim"]]
    return "\n".join(lines)
