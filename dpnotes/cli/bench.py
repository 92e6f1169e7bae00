"""``dpnotes bench``: samples/s of a DP-SGD step (ours, opacus) and of a non-private step."""

from __future__ import annotations

import json
import warnings

# The defaults live here, not in dpnotes.bench, so that `dpnotes --help` does not import torch.
DEFAULT_MODELS = ("tf-mnist-cnn", "dplis-mlp-mnist")
PAPER_MODELS = ("tf-mnist-cnn", "dplis-mlp-mnist", "sadpsgd-cifar-cnn")


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "bench", help="throughput of a DP-SGD step: ours vs non-private vs opacus",
        description=f"Times one training step per method on a fixed synthetic batch. Default "
                    f"models: {', '.join(DEFAULT_MODELS)} (under a minute on 2 CPU cores); "
                    f"the paper CNNs: {', '.join(PAPER_MODELS)}.")
    p.add_argument("--models", nargs="+", default=list(DEFAULT_MODELS), metavar="NAME")
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--steps", type=int, default=10, help="timed steps per method (after 2 warm-up)")
    p.add_argument("--device", default="cpu", help="cpu | cuda | cuda:<i> | auto")
    p.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's)")
    p.add_argument("--json", action="store_true", help="print {'results': [...]} as JSON")
    p.set_defaults(func=run)


def run(args) -> int:
    from dpnotes.bench import bench, format_table

    # opacus's hooks warn on every forward whose input does not require grad: benign here.
    warnings.filterwarnings("ignore", message="Full backward hook is firing", category=UserWarning)
    if args.threads is not None:
        import torch

        if args.threads < 1:
            raise ValueError(f"--threads must be >= 1, got {args.threads}")
        torch.set_num_threads(args.threads)
    results = bench(args.models, batch_size=args.batch_size, steps=args.steps, device=args.device)
    print(json.dumps({"results": results}, indent=2) if args.json else format_table(results))
    return 0
