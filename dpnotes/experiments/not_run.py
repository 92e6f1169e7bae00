"""Why a claim is not run, as data (shared by the experiments modules).

Each paper's module keeps a table of ``(claim-id pattern, reason)`` rows (:func:`fnmatch.fnmatchcase`
patterns); :func:`reasons` turns it into ``NOT_RUN`` (claim id -> reason). The claims registry
speaks for itself first: a value lost in text extraction and a baseline a paper quotes from
elsewhere get :data:`LOST` and :data:`QUOTED` (:func:`registry_reason`); every other claim that
the module does not measure must be matched by exactly one row (:func:`problems`, checked by the
tests for every paper), so a new claim or a row that overlaps another fails loudly instead of
silently taking a reason. A module may pass the claims it always measures, which its rows may
then also match (a broad pattern over a table whose measured cells are few). :data:`DEFAULT` is
the one text the report gives a claim nothing answers (none today: the tests say so).

A claim that needs paper-profile runs not yet stored says what they cost: :func:`needs_runs`
("needs the paper profile: N runs, about H GPU-hours / C CPU-hours", from
:mod:`dpnotes.experiments.run_cost`).
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Iterable
from functools import lru_cache

from dpnotes import claims, jsonio

DEFAULT = "no reproduction yet"
LOST = "paper value missing from the extracted text"
QUOTED = "baseline quoted from another paper, not an experiment of this paper"

Table = tuple[tuple[str, str], ...]


def registry_reason(claim: claims.Claim) -> str | None:
    """The reason the registry's own note gives (value lost, baseline quoted), or None."""
    note = claim.note or ""
    if claim.value is None and "missing from the extracted text" in note:
        return LOST
    if note.startswith("Baseline quoted from"):
        return QUOTED
    return None


def offline(patterns: dict[str, str]) -> Table:
    """Rows for claim-id patterns whose reproduction needs data absent from the offline mirror."""
    return tuple((pattern, f"data not available offline: {dataset}") for pattern, dataset in patterns.items())


def matching(table: Table, claim_id: str) -> list[int]:
    """Indices of the rows of ``table`` whose pattern matches ``claim_id``."""
    return [i for i, (pattern, _) in enumerate(table) if fnmatch.fnmatchcase(claim_id, pattern)]


def reasons(paper: str, table: Table, measured: Iterable[str] = ()) -> dict[str, str]:
    """Claim id -> reason for every claim of ``paper`` outside ``measured`` (what the module always
    answers, which rows may also match) with one: the registry's own reason, else the text of the
    one row of ``table`` that matches it. Claims no row matches are left out (the module measures
    them, or the report gives :data:`DEFAULT`); ``ValueError`` naming the claim if two rows match one."""
    measured = set(measured)
    out = {}
    for claim in claims.load(paper):
        if claim.id in measured:
            continue
        own = registry_reason(claim)
        rows = matching(table, claim.id)
        if own is None and len(rows) > 1:
            raise ValueError(f"{claim.id}: matched by {len(rows)} not-run rows "
                             f"({', '.join(table[i][0] for i in rows)}); each claim takes one reason")
        if own is not None or rows:
            out[claim.id] = own or table[rows[0]][1]
    return out


def problems(paper: str, table: Table, measured: Iterable[str]) -> list[str]:
    """What is wrong with ``table`` given the claims the module measures (empty: nothing): a
    claim neither measured nor explained by the registry that no row or several rows match, a
    row that matches no such claim."""
    measured = set(measured)
    out, used = [], set()
    for claim in claims.load(paper):
        if claim.id in measured or registry_reason(claim) is not None:
            continue
        rows = matching(table, claim.id)
        if len(rows) != 1:
            out.append(f"{claim.id}: matched by {len(rows)} rows")
        used.update(rows)
    out += [f"row {pattern!r} matches no not-run claim" for i, (pattern, _) in enumerate(table) if i not in used]
    return out


def _stored(paper: str, profile: str) -> tuple[dict, ...]:
    """The records of ``paper`` at ``profile`` in the store the caller reads (``DPNOTES_RESULTS``,
    else the committed results): what is stored and what the missing runs cost are read from the
    same store as the verdicts, so a notebook run on an empty store prices from bench figures only."""
    from dpnotes.results import Store

    return _records(str(Store().root), paper, profile)


@lru_cache(maxsize=None)
def _records(root: str, paper: str, profile: str) -> tuple[dict, ...]:
    from dpnotes.results import Store

    return tuple(Store(root).records(paper, profile))


def _run(config: str) -> tuple[str, float | None, float | None]:
    """(run id, GPU-hours, CPU-hours) of one config (JSON; :func:`dpnotes.experiments.run_cost.hours`),
    priced from the store the caller reads."""
    from dpnotes.results import Store

    return _priced(str(Store().root), config)


@lru_cache(maxsize=None)
def _priced(root: str, config: str) -> tuple[str, float | None, float | None]:
    from dpnotes.experiments import resolve
    from dpnotes.experiments import run_cost as cost

    spec = resolve(json.loads(config))
    return (spec.id, *cost.hours([spec], _records(root, spec.paper, spec.profile))[1:])


def _sum(values) -> float | None:
    values = list(values)
    return None if any(v is None for v in values) else sum(values)


def needs_runs(configs: list[dict], what: str = "") -> str:
    """"needs the paper profile: N runs, about H GPU-hours / C CPU-hours" for the runs of
    ``configs`` not yet in the store the caller reads (estimates: :mod:`dpnotes.experiments.run_cost`,
    that store's records else bench), plus ``what`` they are; if every one is stored, says so."""
    if not configs:
        raise ValueError("needs_runs: configs must not be empty")
    runs = [_run(jsonio.dumps(c)) for c in configs]
    stored = {r["id"] for r in _stored(configs[0]["paper"], configs[0]["profile"])}
    todo = [r for r in runs if r[0] not in stored]
    what = f" ({what})" if what else ""
    if not todo:
        return f"its {len(runs)} paper-profile run(s){what} are stored; their read-out is not measured yet"
    n, gpu, cpu = len(todo), _sum(r[1] for r in todo), _sum(r[2] for r in todo)
    hours = (f"about {_h(gpu)} GPU-hours / {_h(cpu)} CPU-hours" if gpu is not None and cpu is not None else
             f"about {_h(cpu)} CPU-hours (no CUDA bench figure)" if cpu is not None else "cost unknown")
    return f"needs the paper profile: {n} run{'s' * (n != 1)}{what}, {hours}"


def _h(hours: float) -> str:
    return f"{hours:.2g}" if hours < 10 else f"{hours:,.0f}"
