"""``dpnotes plan``: the committed seeds plan (:mod:`dpnotes.experiments.plan`), its status in a results
store, and the runs it still asks for on the CPU or the GPU (:mod:`dpnotes.report.seeds_plan`)."""

from __future__ import annotations

from dpnotes.results import Store


def register(sub) -> None:
    p = sub.add_parser("plan", help="the seeds plan: claims, pilot SDs, planned seeds, cost, status",
                       description="Print the committed seeds plan (fixed before its runs: the preregistration) "
                       "with each row's status in the results store, or the runs it still asks for.")
    p.add_argument("--queue", choices=("cpu", "gpu"),
                   help="print the runs still to make on the CPU or the GPU: 'paper|experiment|seeds' per line")
    p.add_argument("--results", metavar="DIR", help="results store (default: $DPNOTES_RESULTS or ./results)")
    p.set_defaults(func=main)


def main(args) -> int:
    from dpnotes.report import seeds_plan as plan

    store = Store(args.results)
    if args.results is not None and not store.root.is_dir():
        raise ValueError(f"--results {args.results}: no such directory")
    if args.queue:
        for paper, experiment, seeds in plan.queue(args.queue, store):
            print(f"{paper}|{experiment}|{','.join(map(str, seeds))}")
        return 0
    print(plan.markdown(plan.table(store)))
    return 0
