"""Re-running a stored spec with its record's torch thread count.

On a CPU a run's numbers depend on torch's thread count (the order of float reductions) and on
the CPU's kernels (:func:`dpnotes.provenance.cpu_isa`); neither is part of the run id. When a
spec is run into a store while the committed store (``results/`` of this checkout, or the one
``$DPNOTES_REFERENCE_RESULTS`` names) holds a verified record of it made on the CPU,
:func:`threads_for` says what to do: without ``--threads``, run with the record's thread count
(said on stderr); with another ``--threads``, run as asked and say that the numbers will then
differ from the stored ones in their last digits. Either message names the CPU kernels of the
record and of this machine: bit for bit also needs the same ones.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from dpnotes import provenance
from dpnotes.results import Store
from dpnotes.spec import RunSpec

COMMITTED = Path(__file__).resolve().parents[2] / "results"


def reference_root() -> Path:
    """``$DPNOTES_REFERENCE_RESULTS``, else the committed store of this checkout."""
    return Path(os.environ.get("DPNOTES_REFERENCE_RESULTS") or COMMITTED)


def stored_threads(record: dict) -> int | None:
    """The torch thread count of a record whose every segment ran on the CPU with one count."""
    counts = {re.fullmatch(r"cpu: .*, (\d+) threads", s.get("device", "")) for s in record["provenance"]["segments"]}
    found = {int(m.group(1)) for m in counts if m is not None}
    return found.pop() if len(found) == 1 and None not in counts else None


def reference_record(spec: RunSpec, store: Store) -> tuple[dict, Path] | None:
    """The verified record of ``spec`` in the reference store, if that is not ``store`` itself."""
    root = reference_root()
    if not root.is_dir() or root.resolve() == Path(store.root).resolve():
        return None
    reference = Store(root)
    try:
        record = reference.get(spec)
    except ValueError:  # a bad reference record is no reference
        return None
    return None if record is None else (record, reference.path(spec))


def threads_for(spec: RunSpec, device: str, store: Store, explicit: int | None) -> tuple[int | None, str | None]:
    """``(threads to run with or None to leave torch's, a line to print or None)`` for ``spec``."""
    if device != "cpu":
        return None, None
    found = reference_record(spec, store)
    threads = stored_threads(found[0]) if found else None
    if threads is None:
        return None, None
    record, path = found
    segment = record["provenance"]["segments"][0]
    cpu, isa = segment.get("cpu", "a CPU it does not name"), segment.get("isa", "kernels not recorded")
    kernels = f"it ran on {cpu} ({isa}), this is {provenance.cpu_model()} ({provenance.cpu_isa()})"
    if explicit is None:
        return threads, (f"run {spec.id}: {threads} torch thread(s), as its stored record {path}; bit for bit also "
                         f"needs the same CPU kernels: {kernels}")
    if explicit != threads:
        return explicit, (f"run {spec.id}: its stored record {path} ran on {threads} torch thread(s), this run on "
                          f"{explicit}: float rounding differs with the thread count, so its losses (rarely its "
                          f"accuracies) will differ from the stored ones in their last digits; --threads {threads} "
                          f"reproduces them ({kernels})")
    return explicit, None
