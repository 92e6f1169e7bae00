"""``dpnotes cost``: the CPU core-hours and GPU-hours the stored runs cost, per paper, profile,
seed and judged claim (:mod:`dpnotes.report.cost`; from stored records only, nothing is trained)."""

from __future__ import annotations

import json

from dpnotes.claims import PAPERS
from dpnotes.cli.results import existing_store
from dpnotes.results import PROFILES


def register(sub) -> None:
    p = sub.add_parser("cost", help="CPU/GPU-hours of the stored runs, per paper, seed and claim",
                       description="Sum the stored records' segment wall times by device (CPU: times its "
                       "threads) per paper and profile, per seed, and per claim judged from runs.")
    p.add_argument("--json", action="store_true", help="print the tables as JSON")
    p.add_argument("--paper", choices=PAPERS, help="one paper only")
    p.add_argument("--profile", choices=PROFILES, help="one profile only (the per-claim costs are unchanged)")
    p.add_argument("--claims", action="store_true", help="also one row per judged claim")
    p.add_argument("--no-claims", action="store_true",
                   help="skip the per-claim costs (they need the scoreboard: seconds, unless cached)")
    p.add_argument("--no-cache", action="store_true",
                   help="compute the scoreboard afresh, leaving its cache alone (dpnotes.scoreboard_cache)")
    p.add_argument("--results", metavar="DIR", help="results store (default: $DPNOTES_RESULTS or ./results)")
    p.set_defaults(func=main)


def main(args) -> int:
    from dpnotes.report.cost import costs, markdown

    if args.claims and args.no_claims:
        raise ValueError("--claims and --no-claims exclude each other")
    store = existing_store(args.results)  # a missing store is named, not costed as empty tables
    records = list(store.records(args.paper))
    rows = []
    if not args.no_claims:  # the claims as `dpnotes scoreboard --json` gives them, from its cache if there
        from dpnotes import scoreboard_cache
        from dpnotes.cli.scoreboard import render

        def compute():
            return render(store, args.paper, True)

        text = compute() if args.no_cache else scoreboard_cache.cached(
            store.root, {"paper": args.paper, "json": True}, compute)
        rows = json.loads(text)["claims"]
    tables = costs(records, rows)
    if args.profile:
        for key in ("by_profile", "by_seed"):
            tables[key] = [r for r in tables[key] if r["profile"] == args.profile]
    if args.json:
        print(json.dumps(tables, indent=1, allow_nan=False))
    else:
        print(markdown(tables, claims=args.claims))
    return 0
