"""``dpnotes scoreboard``: every claim of the papers next to our value and its verdict."""

from __future__ import annotations

import sys
from pathlib import Path

from dpnotes.claims import PAPERS
from dpnotes.cli import jsonout
from dpnotes.results import Store


def register(sub) -> None:
    p = sub.add_parser("scoreboard", help="paper-vs-ours verdicts for every claim",
                       description="Join the claims registry with the run records and print a "
                       "verdict per claim (reproduced, not_reproduced, inconclusive or not_run) with its basis (seeds, "
                       "paired) and fidelity (paper settings or a named substitute); context (quoted baselines, "
                       "values lost from the text) is listed apart and never counted.")
    p.add_argument("--json", action="store_true",
                   help='print {"totals": {...}, "claims": [...], "flagged_records": [...], "excluded_records": [...]} '
                        'as JSON')
    p.add_argument("--paper", choices=PAPERS, help="one paper only")
    p.add_argument("--results", metavar="DIR", help="results store (default: $DPNOTES_RESULTS or ./results)")
    p.add_argument("--no-cache", action="store_true",
                   help="compute afresh and leave the cache alone (the cache is keyed by the dpnotes source, the "
                        "records, the data files and the installed libraries: dpnotes.scoreboard_cache); pure "
                        "values such as calibrations still come from dpnotes.calc_cache, keyed by the source")
    p.set_defaults(func=main)


def totals(rows: list[dict]) -> dict:
    """Per paper: measured verdicts split by fidelity, not-run claims, and context rows apart."""
    from dpnotes.report import context_counts, fidelity_summary, summary

    counts, fid, ctx = summary(rows), fidelity_summary(rows), context_counts(rows)
    return {paper: {**fid[paper], "not_run": counts[paper]["not_run"], "context": ctx[paper]} for paper in counts}


def _grand_total(total: dict) -> str:
    """One line adding up every paper's counts (:func:`totals`)."""
    summed: dict = {}
    for t in total.values():
        for fid in ("paper", "substitute"):
            for verdict, n in t[fid].items():
                summed.setdefault(fid, {}).setdefault(verdict, 0)
                summed[fid][verdict] += n
        for key, n in t["context"].items():
            summed.setdefault("context", {}).setdefault(key, 0)
            summed["context"][key] += n
    not_run = sum(t["not_run"] for t in total.values())
    measured = sum(sum(summed.get(fid, {}).values()) for fid in ("paper", "substitute"))
    return (f"all {len(total)} papers: {measured} claims measured; " + "; ".join(
        f"{fid} settings: " + ", ".join(f"{n} {v}" for v, n in summed.get(fid, {}).items())
        for fid in ("paper", "substitute")) + f"; {not_run} not run (each row above says why); checks and context "
        "(not counted): " + ", ".join(f"{n} {c}" for c, n in summed.get("context", {}).items()))


def _bar(items, progress: bool, what: str, unit: str):
    """``items``, saying on stderr when ``progress`` how far it got: a bar on a terminal, else a line
    at the start and one at the end (a log gets no carriage returns)."""
    import time

    items = list(items)
    if not progress:
        yield from items
        return
    if sys.stderr.isatty():
        from tqdm import tqdm

        yield from tqdm(items, desc=f"dpnotes scoreboard: {what}", unit=unit, file=sys.stderr)
        return
    print(f"dpnotes scoreboard: {what} ({len(items)} {unit}(s)) ...", file=sys.stderr, flush=True)
    start = time.perf_counter()
    yield from items
    print(f"dpnotes scoreboard: {what}: done in {time.perf_counter() - start:.1f} s", file=sys.stderr, flush=True)


def _verify_with_progress(root, paper: str | None) -> None:
    """Verify every record file the scoreboard reads (the store's and the committed ones, which price
    the runs not yet made) once, with a bar: the scans after it find each answer memoised."""
    from dpnotes import repriced
    from dpnotes.record_checks import problem

    roots = list(dict.fromkeys(Path(r).resolve() for r in (root, repriced.COMMITTED) if Path(r).is_dir()))
    files = [(r, f) for r in roots for f in sorted(r.glob(f"{paper or '*'}/*/*.json"))]
    for r, f in _bar(files, True, "verifying the record files", "file"):
        problem(f, r)


def _answers(rows: list[dict], paper: str | None) -> dict:
    """Each paper's answer to its question (:func:`dpnotes.report.layout.answer`), with its sentence
    and rule."""
    from dpnotes.report.headlines import HEADLINES
    from dpnotes.report.layout.summary import RULE, answer

    out = {}
    for p in HEADLINES if paper is None else (paper,):
        word, sentence = answer(rows, p)
        out[p] = {"answer": word, "sentence": sentence.replace("**", ""), "rule": RULE}
    return out


def _store(option: str | None) -> Store:
    """The store to read: a ``--results`` given must be an existing directory; the default one
    may be missing (then every training claim is not_run, and a warning says so)."""
    store = Store(option)
    if option is not None and not store.root.is_dir():
        raise ValueError(f"--results {option}: {'not a directory' if store.root.exists() else 'no such directory'}")
    if not store.root.is_dir():
        print(f"dpnotes scoreboard: warning: no results store at {store.root} (give --results DIR or set "
              "$DPNOTES_RESULTS): every claim that needs a run is not_run", file=sys.stderr)
    return store


def main(args) -> int:
    from dpnotes import calc_cache, scoreboard_cache

    store = _store(args.results)
    with calc_cache.scope():  # pure values (specs, calibrations, exact claims) from the last call
        if args.no_cache:
            output = render(store, args.paper, args.json, progress=True)
        else:
            output = scoreboard_cache.cached(store.root, {"paper": args.paper, "json": args.json},
                                             lambda: render(store, args.paper, args.json, progress=True))
    sys.stdout.write(output)
    return 0


class _ScannedOnce(Store):
    """A store whose files are verified once per (paper, profile) asked for: the verdicts, the
    stale-record check and the excluded list of one call read the same records."""

    def __init__(self, root):
        super().__init__(root)
        self._scans = {}

    def scan(self, paper=None, profile=None):
        if (paper, profile) not in self._scans:
            self._scans[(paper, profile)] = super().scan(paper, profile)
        return self._scans[(paper, profile)]


def render(store: Store, paper: str | None, as_json: bool, progress: bool = False) -> str:
    """What ``dpnotes scoreboard`` prints for ``store`` (one paper or all; JSON or the table). With
    ``progress``, what it is doing goes to stderr: the record files verified (each once: their
    answers are memoised for the rest of the call) and the papers' claims judged."""
    import time

    from dpnotes import call_memo
    from dpnotes.claims import PAPERS
    from dpnotes.report import basis, record_flags, scoreboard

    store, start = _ScannedOnce(store.root), time.perf_counter()
    with call_memo.scope():  # each record file verified and each config resolved once in this call
        if progress:
            _verify_with_progress(store.root, paper)
        rows = []
        for p in _bar(PAPERS if paper is None else (paper,), progress, "judging the claims", "paper"):
            rows += scoreboard(store=store, paper=p)
        flagged = record_flags(store=store, paper=paper)
        found = store.scan(paper)
    if progress:
        print(f"dpnotes scoreboard: computed in {time.perf_counter() - start:.1f} s; kept in its cache for the "
              "next call (dpnotes.scoreboard_cache)", file=sys.stderr)
    flagged += [{k: e[k] for k in ("paper", "profile", "experiment", "seed", "id")} | {"flags": flag}
                for flag, entries in (("unsealed", found.unsealed), ("unlisted", found.unlisted)) for e in entries]
    total = totals(rows)
    answers = _answers(rows, paper)
    if as_json:
        return jsonout.dumps({"totals": total, "answers": answers, "claims": rows, "flagged_records": flagged,
                              "excluded_records": found.excluded}, indent=1) + "\n"
    lines = []
    for paper_, t in total.items():
        line = "; ".join(f"{fid} settings: " + ", ".join(f"{n} {v}" for v, n in t[fid].items())
                         for fid in ("paper", "substitute"))
        lines.append(f"\n{paper_}: {line}; {t['not_run']} not run; checks and context (not counted): "
                     + ", ".join(f"{n} {c}" for c, n in t["context"].items()))
        if paper_ in answers:
            lines.append(f"  answer: {answers[paper_]['answer']} ({answers[paper_]['rule']})")
        lines.append(f"  {'claim':44} {'paper':>9} {'ours':>10}  {'verdict':15} {'basis':16} fidelity")
        for r in (r for r in rows if r["paper"] == paper_):
            value = r["ours"]
            ours = "—" if value is None else (f"{value:.4g}" if isinstance(value, float) else str(value))
            verdict = (r["verdict"] if r["category"] == "claim" else f"check {r['verdict']}" if r["category"] == "check"
                       else f"({r['category']})")
            said = ("" if r["verdict"] != "not_run" else r["evidence"] or "") if value is None else \
                f"{basis(r):16} {r['fidelity'] or '—'}" + (f": {r['substitute']}" if r["substitute"] else "")
            lines.append(f"  {r['id']:44} {r['paper_value'] or '—':>9} {ours if len(ours) <= 10 else 'see below':>10}  "
                         f"{verdict:15} {said}".rstrip())
            if len(ours) > 10:  # a sentence or a long value: whole, on its own line, never cut
                lines.append(f"      ours: {ours}")
    if paper is None and len(total) > 1:
        lines.append("\n" + _grand_total(total))
    if flagged:
        lines.append("\nrecords to look at (stale: answers no claim; dirty tree: written from uncommitted code; "
                     "unsealed: no .sha256 beside it, `dpnotes results seal`; unlisted: its folder has no manifest, "
                     "`dpnotes results manifest`):")
        lines += [f"  {f['paper']}/{f['profile']}/{f['id']}  {f['experiment']} seed={f['seed']}  {f['flags']}"
                  for f in flagged]
    if found.excluded:
        lines.append("\nrecords EXCLUDED (failed verification on read; no claim uses them; `dpnotes results verify`):")
        lines += [f"  {e['path']}: {e['reason']}" for e in found.excluded]
    return "".join(f"{line}\n" for line in lines)
