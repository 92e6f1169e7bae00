"""Small fabricated run records for unit tests of record readers and findings (no training, no store)."""

from __future__ import annotations

import hashlib


def record(experiment: str = "table1.mnist.dpsgd", *, seed: int = 0, paper: str = "toy", profile: str = "paper",
           method: str = "dpsgd", test_acc: float = 0.9, epochs: list[dict] | None = None, final: dict | None = None,
           epsilon: dict | None = None, spec: dict | None = None, devices=("cpu",), wall: float = 12.5) -> dict:
    """A record dict of the store's shape; its id hashes experiment, seed and profile (unique per run)."""
    epochs = epochs if epochs is not None else [
        {"epoch": e, "test_acc": test_acc * e / 3, "wall_s": 1.0 + e,
         "epsilon": {"rdp": {"epsilon": 0.5 * e}, "clt": {"epsilon": 0.4 * e}}} for e in (1, 2, 3)]
    rid = hashlib.sha256(f"{paper}/{profile}/{experiment}/{seed}/{method}".encode()).hexdigest()[:16]
    return {
        "id": rid,
        "spec": {"paper": paper, "profile": profile, "experiment": experiment, "seed": seed, "method": method,
                 "method_config": {}, "model": "cnn", "model_kwargs": {}, "dataset": "mnist", "subset": {},
                 "train": {"epochs": len(epochs), "batch_size": 64}, "components": {}, **(spec or {})},
        "epochs": epochs,
        "final": {"test_acc": test_acc, "steps": 30, **(final or {})},
        "privacy": {"delta": 1e-5, "ledger": [], "epsilon": epsilon or {"rdp": {"epsilon": 1.5, "order": 8.0}}},
        "provenance": {"segments": [{"device": d, "wall_s": wall / len(devices), "dirty": False} for d in devices],
                       "wall_time_s": wall, "dirty": False},
    }


def for_config(module, experiment: str, seed: int = 0, *, test_acc: float = 0.9, epochs: list[dict] | None = None,
               final: dict | None = None, epsilon: dict | None = None, devices=("cpu",)) -> dict:
    """A made-up paper-profile record of ``module``'s config (``experiment``, ``seed``): its real resolved spec
    and id, so that the chapter's readers take it as the run of that config; the metrics are ``test_acc`` etc."""
    from dpnotes import experiments

    config = next(c for c in module.configs("paper") if c["experiment"] == experiment and c["seed"] == seed)
    spec = experiments.resolve(config)
    out = record(experiment, seed=seed, test_acc=test_acc, epochs=epochs, final=final, epsilon=epsilon,
                 devices=devices)
    out["id"], out["spec"] = spec.id, spec.to_dict()
    return out
