"""Numbers pinned: re-running a stored run gives the stored numbers, on any x86-64 or ARM CPU.

A run's id hashes its spec and the versions of the components that compute it
(:mod:`dpnotes.spec`), so a change that moves a run's numbers must bump a version. This test
catches a change that does not: per paper it re-runs the cheapest current quick-profile record
(seconds) on the CPU with the stored thread count and compares every stored metric, epoch by
epoch, and the privacy block (only wall times and provenance are left out).

What must be equal, and within what (:func:`compare`):

* integers, booleans, strings and ``None`` (steps, accepted steps, stop reasons, stage sizes)
  and every accuracy (a key holding ``acc``: a count of right answers over a fixed test set)
  are compared **exactly**: a rounding difference flips no prediction here, a code change does;
* the privacy block and each epoch's ``epsilon`` are float64 arithmetic on the ledger (numpy's
  vectorised ``exp``/``log`` loops differ by a few float64 ulp between AVX2 and AVX-512): within
  ``REPRICE_RTOL`` = 1e-9 relative, the tolerance the store already allows a repriced eps;
* every other float (losses, RMSE, norms) comes out of float32 training, whose kernels are not
  bit-identical across CPUs: torch dispatches by vector unit (AVX2 = 8 lanes, AVX-512 = 16:
  another summation order), ``tanh``/``exp`` use different polynomial approximations, and FMA
  contraction differs. Each step's kernel calls may round differently by a few units of float32
  rounding u = 2**-24 ~ 6.0e-8, and the parameters carry those differences from step to step,
  where they add up (a quick run's small learning rates add them rather than amplify them).
  Allowed: ``ULPS_PER_STEP`` = 16 u per training step (``final.steps``; 1 for a run without
  steps), relative (``float32_rtol``), and that times 1e-3 absolute for values near zero.
  Measured between the Xeon of the committed records and this AMD EPYC (AVX-512), 1 thread: DPlis ``1799195c2e2cbeeb``
  (20 steps) moved its train loss by 1.7e-7 and its test loss by 4.4e-7 relative (7 u: 0.4 u a
  step), SA-DPSGD ``947dfafeb30527d9`` (100 steps) by 7.2e-7 and 6.1e-6 (100 u: 1 u a step);
  accuracies, counts and eps were equal, and DPIS, GDP and LabelDP re-ran bit for bit. The
  allowance is 16 times the largest per-step drift measured (9.5e-5 relative for SA-DPSGD); a
  change of what is computed (another default, another order of operations in dpnotes) moves
  losses far more than that, or an accuracy.

Bit-for-bit equality needs the record's thread count (set here from its device) and the same
CPU kernels: each record made since 2026-11-26 names its CPU model (provenance ``cpu``), and
since 2026-11-28 its vector instruction sets (``isa``); the README's "Reproduce a stored record
bit for bit" says how.

How long: the five re-runs take about 25-30 s on this 2-core AMD EPYC with both cores busy.
"""

from __future__ import annotations

import json
import math
import os
import re

import pytest

from dpnotes import experiments, runner
from dpnotes.claims import PAPERS
from dpnotes.record_checks import REPRICE_RTOL
from dpnotes.results import Store
from dpnotes.spec import RunSpec

MIRROR = [pytest.mark.mirror, pytest.mark.skipif(not os.environ.get("DPNOTES_DATA_MIRROR"),
                                              reason="set DPNOTES_DATA_MIRROR to the dataset mirror")]
COMMITTED = Store(os.path.join(os.path.dirname(__file__), os.pardir, "results"))
TIMING = {"wall_s", "wall_time_s"}
MAX_WALL_S = 30.0  # only records this cheap are re-run
ULPS_PER_STEP = 16  # float32 rounding units a training step may drift by: see the module docstring
EXACT_KEYS = ("acc",)  # a float whose key holds one of these is a count over a fixed set: exact
FLOAT64_PARTS = ("privacy", "epsilon")  # float64 accounting on the ledger


def _threads(record: dict) -> int | None:
    """The torch thread count of a record made on the CPU in one segment (None otherwise)."""
    segments = record["provenance"]["segments"]
    found = re.fullmatch(r"cpu: .*, (\d+) threads", segments[0]["device"]) if len(segments) == 1 else None
    return int(found.group(1)) if found else None


def _sample(paper: str) -> dict | None:
    """The cheapest current, single-segment CPU quick-profile record of ``paper``."""
    current = {s.id for s in runner.specs(paper, "quick")}
    records = [r for r in COMMITTED.records(paper, "quick") if r["id"] in current and _threads(r)
               and r["provenance"]["wall_time_s"] <= MAX_WALL_S]
    return min(records, key=lambda r: r["provenance"]["wall_time_s"], default=None)


def float32_rtol(steps) -> float:
    """The relative drift allowed a float32 training result after ``steps`` steps."""
    steps = steps if isinstance(steps, int) and not isinstance(steps, bool) and steps > 0 else 1
    return ULPS_PER_STEP * steps * 2.0**-24


def compare(ours, stored, path: str = "", *, rtol: float | None = None, atol: float | None = None,
            exact: bool = False) -> list[str]:
    """Where ``ours`` differs from ``stored`` beyond what CPU kernels explain (module docstring):
    one line per differing leaf, with its key path (empty: they agree). ``rtol`` defaults to
    :func:`float32_rtol` of the stored ``final.steps``, ``atol`` to ``rtol * 1e-3``."""
    if rtol is None:
        final = stored.get("final") if isinstance(stored, dict) else None
        rtol = float32_rtol(final.get("steps") if isinstance(final, dict) else None)
    atol = rtol * 1e-3 if atol is None else atol
    if isinstance(stored, dict) and isinstance(ours, dict):
        keys = (set(stored) | set(ours)) - TIMING
        out = []
        for k in sorted(keys):
            if k not in stored or k not in ours:
                out.append(f"{path}.{k}: {'missing in the re-run' if k not in ours else 'not stored'}")
                continue
            float64 = k in FLOAT64_PARTS
            out += compare(ours[k], stored[k], f"{path}.{k}", rtol=REPRICE_RTOL if float64 else rtol,
                           atol=0.0 if float64 else atol, exact=exact or any(e in k for e in EXACT_KEYS))
        return out
    if isinstance(stored, list) and isinstance(ours, list):
        if len(stored) != len(ours):
            return [f"{path}: {len(ours)} entries, {len(stored)} stored"]
        return [line for i, (a, b) in enumerate(zip(ours, stored)) for line in
                compare(a, b, f"{path}[{i}]", rtol=rtol, atol=atol, exact=exact)]
    if isinstance(stored, float) and isinstance(ours, float) and not exact:
        if math.isclose(ours, stored, rel_tol=rtol, abs_tol=atol):
            return []
        return [f"{path}: {ours!r}, stored {stored!r} (relative {abs(ours - stored) / max(abs(stored), 1e-300):.2g},"
                f" allowed {rtol:.2g})"]
    return [] if ours == stored and type(ours) is type(stored) else [f"{path}: {ours!r}, stored {stored!r}"]


def test_compare_allows_kernel_rounding_only():
    stored = {"final": {"test_loss": 2.20535205078125, "test_acc": 0.223, "steps": 20, "wall_s": 1.0},
              "epochs": [{"train_loss": 2.2579456591245934}],
              "privacy": {"epsilon": {"rdp": {"epsilon": 0.7016048767697403}}}}
    rounded = json.loads(json.dumps(stored))
    rounded["final"].update(test_loss=2.20535107421875, wall_s=9.0)  # the EPYC re-run: 4.4e-7 relative
    rounded["epochs"][0]["train_loss"] = 2.2579452856067124
    assert compare(rounded, stored) == []
    for path, value in ((("final", "test_loss"), 2.2055), (("final", "test_acc"), 0.2235),
                        (("final", "steps"), 21), (("privacy", "epsilon", "rdp", "epsilon"), 0.70160488)):
        moved = json.loads(json.dumps(stored))
        leaf = moved
        for k in path[:-1]:
            leaf = leaf[k]
        leaf[path[-1]] = value
        assert [line.split(":")[0] for line in compare(moved, stored)] == ["." + ".".join(path)]


@pytest.mark.parametrize("paper", [pytest.param(p, marks=MIRROR) for p in PAPERS])
def test_a_stored_quick_run_reruns_to_the_same_numbers(paper):
    import torch

    record = _sample(paper)
    if record is None:
        pytest.skip(f"{paper}: no current quick-profile record of <= {MAX_WALL_S:g} s on one CPU segment")
    threads = torch.get_num_threads()
    torch.set_num_threads(_threads(record))
    try:
        spec = RunSpec.from_dict(record["spec"])
        out = experiments.module(paper).execute(spec, device="cpu", progress=False, checkpoint=None)
    finally:
        torch.set_num_threads(threads)
    out = json.loads(json.dumps(out))  # as stored: tuples become lists
    rtol = float32_rtol(record["final"].get("steps"))
    differ = [line for part in ("final", "epochs", "privacy")
              for line in compare(out[part], record[part], part, rtol=rtol, atol=rtol * 1e-3)]
    assert not differ, (
        f"{paper} {record['spec']['experiment']} ({record['id']}): re-running its spec moved numbers beyond "
        f"CPU-kernel rounding without a version bump (dpnotes.spec): bump the version of what changed: {differ[:5]}")
