"""``dpnotes run PAPER``: execute a paper's experiments at a profile, skipping stored records."""

from __future__ import annotations

from dpnotes.claims import PAPERS
from dpnotes.results import PROFILES, Store


def register(sub) -> None:
    p = sub.add_parser("run", help="run a paper's experiments (records go to the results store)",
                       description="Run the experiments behind a paper's tables and figures. "
                       "Configs that already have a record are skipped; an interrupted run resumes "
                       "from its checkpoint.")
    p.add_argument("paper", choices=PAPERS, metavar="PAPER", help=f"one of: {', '.join(PAPERS)}")
    p.add_argument("--profile", choices=PROFILES, default="quick",
                   help="smoke (seconds), quick (minutes on a laptop CPU; default), paper (the paper's settings)")
    p.add_argument("--only", metavar="PATTERN", help="run only experiments matching this glob, e.g. 'table1.*'")
    p.add_argument("--device", choices=("cpu", "cuda", "auto"), default="auto",
                   help="where to train (default: cuda if available)")
    p.add_argument("--results", metavar="DIR", help="results store (default: $DPNOTES_RESULTS or ./results)")
    p.add_argument("--list", action="store_true", help="list the configs and whether they have records; run nothing")
    p.add_argument("--threads", type=int, metavar="N",
                   help="torch intra-op threads (default: torch's choice; use 1 per process when "
                        "several runs share a CPU)")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.set_defaults(func=main)


def main(args) -> int:
    from dpnotes.runner import run_paper, specs

    store = Store(args.results)
    if args.threads is not None:
        import torch

        if args.threads < 1:
            raise ValueError(f"--threads must be >= 1, got {args.threads}")
        torch.set_num_threads(args.threads)
    if args.list:
        todo = specs(args.paper, args.profile, args.only)
        for spec in todo:
            state = "done" if store.has(spec) else "missing"
            print(f"{spec.id}  {state:7}  {spec.experiment}  seed={spec.seed}")
        if not todo:
            print(f"{args.paper} has no experiments at profile {args.profile!r} yet")
        return 0
    records = run_paper(args.paper, args.profile, only=args.only, device=args.device, store=store,
                        progress=not args.no_progress)
    print(f"{args.paper} [{args.profile}]: {len(records)} record(s) in {store.root}")
    return 0
