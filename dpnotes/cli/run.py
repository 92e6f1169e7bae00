"""``dpnotes run PAPER``: execute a paper's experiments at a profile, skipping stored records."""

from __future__ import annotations

import argparse
import sys
import tempfile

from dpnotes.claims import PAPERS
from dpnotes.results import PROFILES, Store

STUDIES = ("audit", "audit-step", "compare")  # dpnotes.experiments.STUDIES (written out: --help imports nothing heavy)


def register(sub) -> None:
    p = sub.add_parser("run", help="run a paper's experiments (records go to the results store)",
                       description="Run the experiments behind a paper's tables and figures. "
                       "Configs that already have a record are skipped; an interrupted run resumes "
                       "from its checkpoint.")
    p.add_argument("paper", choices=PAPERS + STUDIES, metavar="PAPER", help=f"one of: {', '.join(PAPERS + STUDIES)}")
    p.add_argument("--profile", choices=PROFILES, default="quick",
                   help="smoke (seconds), quick (minutes on a laptop CPU; default), paper (the paper's settings)")
    p.add_argument("--only", metavar="PATTERN", help="run only experiments matching this glob, e.g. 'table1.*'")
    p.add_argument("--seeds", type=_seeds, metavar="LIST",
                   help="run only these seeds, comma-separated, e.g. '0' or '0,1'")
    p.add_argument("--device", choices=("cpu", "cuda", "auto"), default="auto",
                   help="where to train (default: cuda if available)")
    p.add_argument("--results", metavar="DIR", help="results store (default: $DPNOTES_RESULTS or ./results)")
    p.add_argument("--dry-run", "--list", dest="dry_run", action="store_true",
                   help="list the runs, whether each is stored and its estimated cost (from stored "
                        "records' wall times); run nothing")
    p.add_argument("--threads", type=int, metavar="N",
                   help="torch intra-op threads (default: a CPU run of a spec the committed store holds "
                        "takes its record's count, else torch's choice; use 1 per process when several "
                        "runs share a CPU)")
    p.add_argument("--yes", "-y", action="store_true",
                   help="start without asking: runs estimated over an hour on their device are otherwise "
                        "started only after a y on a terminal (and not at all without one)")
    p.add_argument("--no-progress", action="store_true", help="no plan, no progress bars")
    p.add_argument("--executor", choices=("local", "ray"), default="local",
                   help="local: one run after another in this process (default); ray: one Ray task "
                        "per run (needs the extra dpnotes[ray])")
    p.add_argument("--address", metavar="ADDR",
                   help="with --executor ray: 'auto' (the cluster this machine is in), "
                        "'ray://HOST:PORT' or 'HOST:PORT'; default: start Ray on this machine")
    p.add_argument("--gpus-per-run", type=float, metavar="F",
                   help="with --executor ray: GPUs each run asks for, e.g. 0.25 packs 4 runs on a GPU "
                        "(default 0; --device auto then trains on CUDA exactly when F > 0)")
    p.add_argument("--cpus-per-run", type=int, metavar="N",
                   help="with --executor ray: CPUs each run asks for (default 1); also its torch "
                        "threads unless --threads is given")
    p.set_defaults(func=main)


def _ask(question: str) -> bool:
    """A y/N question on the terminal (stderr); only y or yes starts."""
    print(question, end="", file=sys.stderr, flush=True)
    return sys.stdin.readline().strip().lower() in ("y", "yes")


def _seeds(text: str) -> tuple[int, ...]:
    try:
        seeds = tuple(int(t) for t in text.split(","))
    except ValueError:
        seeds = ()
    if not seeds or min(seeds) < 0:
        raise argparse.ArgumentTypeError(f"--seeds takes non-negative integers separated by commas, got {text!r}")
    return seeds


def results_store(option: str | None, *, write: bool) -> Store:
    """The store at ``--results`` (default: $DPNOTES_RESULTS or ./results); ``ValueError``
    naming it if it is not a directory or, when ``write``, could not be created or written
    (probed by writing a temporary file in it, or in its nearest existing parent: nothing is
    created before the run)."""
    store = Store(option)
    root = store.root
    if root.exists() and not root.is_dir():
        raise ValueError(f"--results {root}: not a directory")
    if write:
        existing = next(p for p in (root, *root.absolute().parents) if p.exists())
        if not existing.is_dir():
            raise ValueError(f"--results {root}: cannot be created ({existing} is not a directory)")
        try:
            tempfile.TemporaryFile(dir=existing).close()  # a real write: permissions, read-only file systems
        except OSError as exc:
            raise ValueError(f"--results {root}: cannot be written ({existing}: {exc.strerror or exc})") from None
    return store


def main(args) -> int:
    from dpnotes import executors
    from dpnotes.runner import run_paper, specs

    if args.threads is not None and args.threads < 1:
        raise ValueError(f"--threads must be >= 1, got {args.threads}")
    store = results_store(args.results, write=not args.dry_run)
    if args.dry_run:
        from dpnotes.executors.cost import plan

        lines = plan(specs(args.paper, args.profile, args.only, args.seeds), store)
        print("\n".join(lines) or f"{args.paper} has no experiments at profile {args.profile!r} yet")
        return 0
    ray_options = {"address": args.address, "gpus_per_run": args.gpus_per_run,
                   "cpus_per_run": args.cpus_per_run}
    given = {k: v for k, v in ray_options.items() if v is not None}
    if args.executor == "local":
        if given:
            flags = ", ".join("--" + k.replace("_", "-") for k in given)
            raise ValueError(f"{flags} only apply with --executor ray")
        if args.threads is not None:
            import torch

            torch.set_num_threads(args.threads)
        executor = executors.create("local", threads=args.threads)
    else:
        executor = executors.create("ray", threads=args.threads, **given)
    wanted = specs(args.paper, args.profile, args.only, args.seeds)
    before = sum(store.has(s) for s in wanted)
    records = run_paper(args.paper, args.profile, only=args.only, seeds=args.seeds, device=args.device, store=store,
                        progress=not args.no_progress, executor=executor, yes=args.yes, caller="cli",
                        ask=_ask if sys.stdin.isatty() and sys.stderr.isatty() else None)
    new = len(records) - before
    print(f"{args.paper} [{args.profile}]: " + (f"{new} new, {before} already stored" if new else
                                                f"nothing to run: all {before} already stored") + f" in {store.root}")
    if args.profile != "paper":
        print(f"note: {args.profile}-profile records show the pipeline works; they feed no verdict (only "
              "paper-profile records are compared with the papers)")
    return 0
