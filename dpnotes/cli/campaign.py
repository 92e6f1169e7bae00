"""``dpnotes campaign``: the most valuable paper-profile runs that fit a time budget, in parallel."""

from __future__ import annotations

import sys

PAPERS = ("dplis", "dpis", "sadpsgd", "labeldp", "gdp", "audit", "compare")  # dpnotes.campaign.PAPERS


def register(sub) -> None:
    p = sub.add_parser("campaign", help="run the most valuable missing paper-profile runs within a time budget",
                       description="Pick the paper-profile runs not yet stored (here or in the committed "
                       "results) in the order of the README's seeds plan, estimate each on the device from "
                       "stored records, pack those that fit the budget onto parallel workers and run them; "
                       "records and checkpoints go to one folder that can be copied back.")
    p.add_argument("--budget", default="15m", metavar="DURATION",
                   help="wall-clock budget, e.g. 900, 15m or 1.5h (default 15m); runs still going at its end "
                        "are stopped, their checkpoints kept")
    p.add_argument("--device", choices=("cpu", "cuda"), default="cuda", help="where to train (default cuda)")
    p.add_argument("--workers", type=int, metavar="N",
                   help="runs at once (default: 14 on cuda, the CPU count on cpu)")
    p.add_argument("--threads", type=int, default=1, metavar="N", help="torch threads per run (default 1)")
    p.add_argument("--papers", metavar="LIST", default=",".join(PAPERS),
                   help=f"comma-separated, in order (default {','.join(PAPERS)})")
    p.add_argument("--exclude", action="append", default=[], metavar="PAPER:GLOB",
                   help="leave out runs of PAPER whose experiment matches GLOB (repeatable), e.g. runs "
                        "another machine is doing: --exclude 'sadpsgd:table1.mnist.*'")
    p.add_argument("--results", metavar="DIR", help="results store (default: $DPNOTES_RESULTS or ./results)")
    p.add_argument("--chunks", action="store_true",
                   help="fill each worker's time left with a chunk of the most valuable run that does not fit "
                        "(stopped at the budget's end, its checkpoint kept for the next campaign on this device)")
    p.add_argument("--dry-run", "--list", dest="dry_run", action="store_true",
                   help="show what would run on each worker and what is left; run nothing")
    p.set_defaults(func=main)


def _cuda_here() -> bool:
    """Whether an NVIDIA GPU is visible, without importing torch (a dry run trains nothing)."""
    import glob
    import shutil

    return bool(glob.glob("/dev/nvidia[0-9]*")) or shutil.which("nvidia-smi") is not None


def main(args) -> int:
    import os

    from dpnotes import campaign as c
    from dpnotes.cli.run import results_store

    budget = c.parse_budget(args.budget)
    papers = tuple(t for t in args.papers.split(",") if t)
    unknown = [t for t in papers if t not in c.PAPERS]
    if unknown or not papers:
        raise ValueError(f"--papers takes names from {','.join(c.PAPERS)}; got {args.papers!r}")
    if args.threads < 1:
        raise ValueError(f"--threads must be >= 1, got {args.threads}")
    exclude = []
    for item in args.exclude:
        paper, sep, glob = item.partition(":")
        if not sep or paper not in c.PAPERS or not glob:
            raise ValueError(f"--exclude takes PAPER:GLOB with PAPER one of {','.join(c.PAPERS)}; got {item!r}")
        exclude.append((paper, glob))
    workers = args.workers if args.workers is not None else (14 if args.device == "cuda" else os.cpu_count() or 1)
    store = results_store(args.results, write=not args.dry_run)
    if not args.dry_run and args.device == "cuda":
        import torch

        if not torch.cuda.is_available():
            raise ValueError("--device cuda: no CUDA device is available here (use --device cpu or --dry-run)")
    campaign = c.plan(c.candidates(papers, args.device, store, exclude), budget_s=budget, workers=workers,
                      device=args.device, chunks=args.chunks)
    print("\n".join(campaign.lines()))
    if args.dry_run and args.device == "cuda" and not _cuda_here():
        print("campaign: warning: no CUDA device on this machine: this plan is for a GPU machine "
              "(run it there, or plan for this one with --device cpu)", file=sys.stderr)
    if args.dry_run:
        return 0
    summary = c.execute(campaign, results=store.root, threads=args.threads)
    done = sum(p.outcome == "stored" for p in campaign.picked)
    chunks = sum(p.chunk and p.outcome.startswith("stopped") for p in campaign.picked)
    print(f"campaign: {done} of {len(campaign.picked)} run(s) stored in {store.root}"
          + (f", {chunks} chunk(s) checkpointed" if chunks else "") + f"; summary {summary}")
    for p in campaign.picked:
        print(f"  {p.paper} {p.experiment} seed={p.seed}: {p.outcome} ({p.wall_s} s)")
    return 0 if done + chunks == len(campaign.picked) else 1
