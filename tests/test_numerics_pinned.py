"""Numbers pinned: re-running a stored run gives the stored numbers, bit for bit.

A run's id hashes its spec and the versions of the components that compute it
(:mod:`dpnotes.spec`), so a change that moves a run's numbers must bump a version. This test
catches a change that does not: per paper it re-runs the cheapest current quick-profile record
(seconds) on the CPU with the stored thread count and requires every stored metric, epoch by
epoch, and the privacy block, exactly (only wall times and provenance may differ).

Equal numbers need the same thread count (checked: the record's device names it) and, for
float rounding, the same kind of CPU: the committed records come from one x86-64 Xeon; a
record that names another CPU model (provenance ``cpu``) than this machine's is skipped.
"""

from __future__ import annotations

import json
import os
import re

import pytest

from dpnotes import experiments, provenance, runner
from dpnotes.claims import PAPERS
from dpnotes.results import Store
from dpnotes.spec import RunSpec

pytestmark = [pytest.mark.mirror, pytest.mark.skipif(not os.environ.get("DPNOTES_DATA_MIRROR"),
                                                 reason="set DPNOTES_DATA_MIRROR to the dataset mirror")]
COMMITTED = Store(os.path.join(os.path.dirname(__file__), os.pardir, "results"))
TIMING = {"wall_s", "wall_time_s"}
MAX_WALL_S = 30.0  # only records this cheap are re-run
# Records that do not re-run to their numbers on the machine that checked them, with what was
# found; a strict xfail: fixing the cause (or a new sample) makes the test fail until removed here.
KNOWN_UNREPRODUCED = {
    "947dfafeb30527d9": "SA-DPSGD quick table1.mnist.dpsgd_tanh: losses differ at 1e-6 relative (accuracy equal) "
                        "even when re-run at its own commit 846bc3b with the same library versions and 1 thread; "
                        "the record names no CPU model, so another CPU is the likely cause",
}


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


def _numbers(value):
    if isinstance(value, dict):
        return {k: _numbers(v) for k, v in value.items() if k not in TIMING}
    if isinstance(value, list):
        return [_numbers(v) for v in value]
    return value


@pytest.mark.parametrize("paper", PAPERS)
def test_a_stored_quick_run_reruns_to_the_same_numbers(paper, request):
    import torch

    record = _sample(paper)
    if record is None:
        pytest.skip(f"{paper}: no current quick-profile record of <= {MAX_WALL_S:g} s on one CPU segment")
    cpu = record["provenance"]["segments"][0].get("cpu")
    if cpu is not None and cpu != provenance.cpu_model():
        pytest.skip(f"{record['id']} was made on {cpu!r}, this is {provenance.cpu_model()!r}")
    if record["id"] in KNOWN_UNREPRODUCED:
        request.node.add_marker(pytest.mark.xfail(reason=KNOWN_UNREPRODUCED[record["id"]], strict=True))
    threads = torch.get_num_threads()
    torch.set_num_threads(_threads(record))
    try:
        spec = RunSpec.from_dict(record["spec"])
        out = experiments.module(paper).execute(spec, device="cpu", progress=False, checkpoint=None)
    finally:
        torch.set_num_threads(threads)
    out = json.loads(json.dumps(out))  # as stored: tuples become lists
    for part in ("final", "epochs", "privacy"):
        assert _numbers(out[part]) == _numbers(record[part]), (
            f"{paper} {record['spec']['experiment']} ({record['id']}): re-running its spec moved {part!r} "
            "without a version bump (dpnotes.spec): bump the version of what changed")
