"""``dpnotes scoreboard``: every claim of the papers next to our value and its verdict."""

from __future__ import annotations

import sys

from dpnotes.claims import PAPERS
from dpnotes.cli import jsonout
from dpnotes.results import Store


def register(sub) -> None:
    p = sub.add_parser("scoreboard", help="paper-vs-ours verdicts for every claim",
                       description="Join the claims registry with the run records and print a "
                       "verdict per claim: reproduced, trend, not_reproduced or not_run.")
    p.add_argument("--json", action="store_true",
                   help='print {"claims": [...], "flagged_records": [...], "excluded_records": [...]} as JSON')
    p.add_argument("--paper", choices=PAPERS, help="one paper only")
    p.add_argument("--results", metavar="DIR", help="results store (default: $DPNOTES_RESULTS or ./results)")
    p.set_defaults(func=main)


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
    from dpnotes.report import VERDICTS, record_flags, scoreboard, summary

    store = _store(args.results)
    rows = scoreboard(store=store, paper=args.paper)
    flagged = record_flags(store=store, paper=args.paper)
    found = store.scan(args.paper)
    flagged += [{k: e[k] for k in ("paper", "profile", "experiment", "seed", "id")} | {"flags": "unsealed"}
                for e in found.unsealed]
    if args.json:
        print(jsonout.dumps({"claims": rows, "flagged_records": flagged, "excluded_records": found.excluded},
                            indent=1))
        return 0
    counts = summary(rows)
    for paper in dict.fromkeys(r["paper"] for r in rows):
        c = counts[paper]
        print(f"\n{paper}: " + ", ".join(f"{c[v]} {v}" for v in VERDICTS))
        print(f"  {'claim':44} {'paper':>9} {'ours':>10}  verdict")
        for r in (r for r in rows if r["paper"] == paper):
            ours = "—" if r["ours"] is None else (f"{r['ours']:.4g}" if isinstance(r["ours"], float) else str(r["ours"]))
            print(f"  {r['id']:44} {r['paper_value'] or '—':>9} {ours:>10}  {r['verdict']}")
    if flagged:
        print("\nrecords to look at (stale: answers no claim; dirty tree: written from uncommitted code; "
              "unsealed: no .sha256 beside it, `dpnotes results seal`):")
        for f in flagged:
            print(f"  {f['paper']}/{f['profile']}/{f['id']}  {f['experiment']} seed={f['seed']}  {f['flags']}")
    if found.excluded:
        print("\nrecords EXCLUDED (failed verification on read; no claim uses them; `dpnotes results verify`):")
        for e in found.excluded:
            print(f"  {e['path']}: {e['reason']}")
    return 0
