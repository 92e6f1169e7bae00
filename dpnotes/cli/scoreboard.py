"""``dpnotes scoreboard``: every claim of the papers next to our value and its verdict."""

from __future__ import annotations

import json

from dpnotes.claims import PAPERS
from dpnotes.results import Store


def register(sub) -> None:
    p = sub.add_parser("scoreboard", help="paper-vs-ours verdicts for every claim",
                       description="Join the claims registry with the run records and print a "
                       "verdict per claim: reproduced, trend, not_reproduced or not_run.")
    p.add_argument("--json", action="store_true", help='print {"claims": [...]} as JSON')
    p.add_argument("--paper", choices=PAPERS, help="one paper only")
    p.add_argument("--results", metavar="DIR", help="results store (default: $DPNOTES_RESULTS or ./results)")
    p.set_defaults(func=main)


def main(args) -> int:
    from dpnotes.report import VERDICTS, record_flags, scoreboard, summary

    store = Store(args.results)
    rows = scoreboard(store=store, paper=args.paper)
    flagged = record_flags(store=store, paper=args.paper)
    if args.json:
        print(json.dumps({"claims": rows, "flagged_records": flagged}, indent=1, allow_nan=False))
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
        print("\nrecords to look at (stale: answers no claim; dirty tree: written from uncommitted code):")
        for f in flagged:
            print(f"  {f['paper']}/{f['profile']}/{f['id']}  {f['experiment']} seed={f['seed']}  {f['flags']}")
    return 0
