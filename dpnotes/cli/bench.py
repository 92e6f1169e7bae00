"""``dpnotes bench``: samples/s and peak memory of a DP-SGD step (ours, opacus) and of a
non-private step; with ``--end-to-end PAPER``, a paper experiment's real run cut to one epoch and
where its time goes (:mod:`dpnotes.bench_e2e`)."""

from __future__ import annotations

import contextlib
import json
import re
import sys
import warnings

from dpnotes.claims import PAPERS
from dpnotes.results import PROFILES

# The defaults live here, not in dpnotes.bench, so that `dpnotes --help` does not import torch.
DEFAULT_MODELS = ("tf-mnist-cnn", "dplis-mlp-mnist")
# The registered models the papers train with DP-SGD (resnet18v2 has BatchNorm and serves
# LabelDP, which trains without DP-SGD; papernot-cifar-cnn has sadpsgd-cifar-cnn's layers).
PAPER_MODELS = ("tf-mnist-cnn", "dplis-mlp-mnist", "dplis-cifar-cnn", "dplis-mlp-cifar", "gdp-adult",
                "gdp-imdb", "neumf", "sadpsgd-cnn", "sadpsgd-cifar-cnn", "scatternet-cnn",
                "scatternet-cifar-cnn", "dpis-imdb-bilstm")
METHODS = ("ghost", "func", "opacus-grads", "dplis-ghost", "dplis-ghost-implicit", "dplis-func", "nonprivate",
           "opacus", "opacus-ghost")
DEFAULT_METHODS = ("ghost", "func", "nonprivate", "opacus", "opacus-ghost")


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "bench", help="throughput of a DP-SGD step: ours vs non-private vs opacus",
        description=f"Times one training step per method on a fixed synthetic batch (median of "
                    f"--steps) and measures its peak memory. Default models: "
                    f"{', '.join(DEFAULT_MODELS)}; --paper: {', '.join(PAPER_MODELS)}.")
    p.add_argument("--models", nargs="+", default=None, metavar="NAME")
    p.add_argument("--paper", action="store_true", help="every model the papers train with DP-SGD")
    p.add_argument("--batch-size", default="256",
                   help="an integer, or 'paper': each model's batch size in its paper (models without one skipped)")
    p.add_argument("--methods", nargs="+", default=list(DEFAULT_METHODS), metavar="METHOD",
                   help=f"of {', '.join(METHODS)} (default: {' '.join(DEFAULT_METHODS)}); dplis-ghost draws "
                        "DPlis' perturbations as the stored records did (torch.randn), dplis-ghost-implicit as "
                        "its new seeds do (draws='implicit-first-layer': the first layer's perturbation drawn as its "
                        "output's, MLPs only)")
    p.add_argument("--dplis-k", type=int, default=10, help="K of the dplis-* methods (smoothing draws)")
    p.add_argument("--steps", type=int, default=None,
                   help="timed steps per method (after 2 warm-up; default 10); with --end-to-end: steps of "
                        "the cut run (default: one whole epoch of the paper config)")
    p.add_argument("--device", default="cpu", help="cpu | cuda | cuda:<i> | auto")
    p.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's)")
    p.add_argument("--max-memory", type=float, default=None, metavar="MIB",
                   help="skip a method that would hold more than MIB of per-example gradients (func, "
                        "opacus hooks): said in its row (default: no limit)")
    p.add_argument("--json", action="store_true", help="print {'results': [...]} as JSON")
    p.add_argument("--markdown", action="store_true", help="print the README's markdown table")
    e2e = p.add_argument_group("end to end", "a paper experiment's real run, cut to one epoch, timed by phase "
                               "(steps, evaluation, batching, the method's passes, accounting, data loading)")
    e2e.add_argument("--end-to-end", choices=PAPERS, metavar="PAPER", help=f"one of: {', '.join(PAPERS)}")
    e2e.add_argument("--only", metavar="PATTERN", help="the first experiment matching this glob (default: the first)")
    e2e.add_argument("--profile", choices=PROFILES, default="paper", help="the configs' profile (default paper)")
    e2e.add_argument("--grad-backend", choices=("func", "ghost", "opacus"), default=None,
                     help="instead of the backend a new seed of the experiment gets")
    p.set_defaults(func=run)


def run(args) -> int:
    if args.end_to_end is None:
        stray = [f for f, v in (("--only", args.only), ("--grad-backend", args.grad_backend)) if v is not None]
        if stray or args.profile != "paper":
            raise ValueError(f"{', '.join(stray) or '--profile'} only apply with --end-to-end")
    elif args.models is not None or args.paper:
        raise ValueError("--end-to-end runs a paper experiment: give no --models or --paper")
    elif args.markdown or args.max_memory is not None:
        raise ValueError("--markdown and --max-memory apply to the step bench, not --end-to-end")
    if args.threads is not None:
        import torch

        if args.threads < 1:
            raise ValueError(f"--threads must be >= 1, got {args.threads}")
        torch.set_num_threads(args.threads)
    if args.end_to_end is not None:
        return _end_to_end(args)
    from dpnotes.bench import bench, format_markdown, format_table, paper_batch_size

    # opacus's hooks warn on every forward whose input does not require grad: benign here.
    warnings.filterwarnings("ignore", message="Full backward hook is firing", category=UserWarning)
    if args.models is not None and args.paper:
        raise ValueError("give --models or --paper, not both")
    names = PAPER_MODELS if args.paper else args.models or DEFAULT_MODELS
    batch = args.batch_size if args.batch_size == "paper" else _integer("--batch-size", args.batch_size)
    if args.json and args.markdown:
        raise ValueError("give --json or --markdown, not both")
    steps = 10 if args.steps is None else args.steps
    with _memory_named(f"--batch-size {batch}", args.device):
        results = bench(names, batch_size=batch, steps=steps, device=args.device, methods=args.methods,
                        dplis_k=args.dplis_k, max_memory_mb=args.max_memory)
    print(json.dumps({"results": results}, indent=2) if args.json
          else format_markdown(results) if args.markdown else format_table(results))
    skipped = [name for name in names if batch == "paper" and paper_batch_size(name) is None]
    if skipped:  # said, not silent: their papers print no batch size (any device), so no row
        print(f"no row for {', '.join(skipped)}: their papers print no DP-SGD batch size for them "
              "(give --batch-size N)", file=sys.stderr)
    return 0


def _end_to_end(args) -> int:
    from dpnotes.bench_e2e import end_to_end, format_rows

    device = args.device
    if device == "auto":
        from dpnotes.executors.local import resolve_device

        device = resolve_device(device)
    with _memory_named(f"--end-to-end {args.end_to_end}", device):
        result = end_to_end(args.end_to_end, profile=args.profile, only=args.only, steps=args.steps,
                            grad_backend=args.grad_backend, device=device)
    print(json.dumps({"results": [result]}, indent=2) if args.json else format_rows([result]))
    return 0


@contextlib.contextmanager
def _memory_named(what: str, device: str):
    """Turn an allocation that does not fit (torch's ``OutOfMemoryError``, the CPU allocator's
    ``can't allocate memory``, Python's ``MemoryError``) into one ``ValueError`` line naming ``what``."""
    try:
        yield
    except (MemoryError, RuntimeError) as exc:
        text = str(exc)
        if not isinstance(exc, MemoryError) and "out of memory" not in text.lower() and "allocate" not in text:
            raise
        found = re.search(r"tried to allocate ([\d.]+ ?\w*)", text)
        tried = f" (tried to allocate {found.group(1)})" if found else ""
        raise ValueError(f"{what} does not fit in the memory of {device}{tried}: give a smaller one") from None


def _integer(flag: str, text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"{flag} (batch_size) must be an integer or 'paper', got {text!r}") from None
