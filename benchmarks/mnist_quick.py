"""MNIST, TF-tutorial CNN, DP-SGD at the quick profile: does the engine learn?

sigma 1.1, C 1, B 256 (q = 256/60000, Poisson), lr 0.15, plain SGD, noise on the sum divided
by the expected batch size (TF Privacy tutorial settings; GDP paper Sec. 5). Reaching >= 90 %
test accuracy within a few epochs is the acceptance check of the engine (not a paper claim).
Trains with TrainConfig's default backend (ghost clipping). From the repository root, with the
project's environment (`make setup`):

    DPNOTES_DATA_MIRROR=/path/to/mirror .venv/bin/python benchmarks/mnist_quick.py [--epochs 8]
"""

from __future__ import annotations

import argparse
import json
import time

import torch

from dpnotes import models
from dpnotes.data import load_mnist
from dpnotes.train import TrainConfig, train


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's)")
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    train_data, test_data = load_mnist("train", model_ready=True), load_mnist("test", model_ready=True)
    torch.manual_seed(args.seed)
    model = models.create("tf-mnist-cnn")
    config = TrainConfig(epochs=args.epochs, batch_size=256, lr=0.15, clip=1.0,
                         noise_multiplier=1.1, seed=args.seed)
    start = time.perf_counter()
    record = train(model, train_data, test_data, config, progress=False)
    wall = time.perf_counter() - start
    for e in record["epochs"]:
        print(f"epoch {e['epoch']}: test acc {e['test_acc']:.4f}  train loss {e['train_loss']:.4f}  "
              f"eps(rdp) {e['epsilon']['rdp']['epsilon']:.3f}  {e['wall_s']:.1f} s")
    print(json.dumps({"test_acc": record["final"]["test_acc"], "wall_s": round(wall, 1),
                      "epsilon": record["privacy"]["epsilon"], "threads": torch.get_num_threads()}))
    return 0 if record["final"]["test_acc"] >= 0.90 else 1


if __name__ == "__main__":
    raise SystemExit(main())
