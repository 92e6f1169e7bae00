"""The Ray executor: each run one Ray task, on a Ray cluster or a Ray instance started here.

Each task asks for ``cpus_per_run`` CPUs and ``gpus_per_run`` GPUs (a fraction packs several
small runs on one GPU), sets torch's thread count itself (``threads``, default
``cpus_per_run``: records made with the same thread count on a CPU are equal) and trains its
spec with :func:`dpnotes.executors.local.train_record`, the local executor's own code, with
checkpoints in ``<store>/.checkpoints`` (on the worker's file system: a shared one lets a run
resume on another node). A worker that dies (killed, out of memory, node lost) has its task
retried by Ray up to ``max_retries`` times, each retry resuming from the checkpoint; an error
raised by a run itself is not retried. The task returns the record and this process, the
driver, stores it with the same atomic writer as the local executor, so the records land in
the driver's results store wherever the workers are.

A worker runs the dpnotes installed on its node; a task refuses to run unless that source is
the driver's (same commit, same uncommitted changes: :func:`dpnotes.provenance.fingerprint`),
so a record made on the cluster has the provenance a local run would give it.
"""

from __future__ import annotations

import platform
import socket
from collections.abc import Iterable, Iterator
from pathlib import Path

from dpnotes import provenance, validate
from dpnotes.executors import DEVICES, ExecutorError, local
from dpnotes.executors.lock import run_lock
from dpnotes.results import Store
from dpnotes.spec import RunSpec

MAX_RETRIES = 3
CONNECT_TIMEOUT_S = 5.0
INSTALL = ("install the optional extra: pip install -c constraints.txt -e '.[ray]' in a checkout "
           "(pip install 'dpnotes[ray]' otherwise), or use --executor local")


class SourceMismatch(ExecutorError):
    """A worker's dpnotes is not the driver's."""


def _ray():
    try:
        import ray
    except ImportError as exc:
        raise ExecutorError(f"--executor ray needs Ray, which is not installed: {INSTALL}") from exc
    return ray


def check_reachable(address: str, timeout: float = CONNECT_TIMEOUT_S) -> None:
    """``ExecutorError`` unless a TCP connection to ``address`` (``ray://HOST:PORT`` or
    ``HOST:PORT``) opens within ``timeout`` seconds (Ray itself waits minutes on a dead host)."""
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not host or not port.isdigit():
        raise ExecutorError(f"--address must be 'auto', 'ray://HOST:PORT' or 'HOST:PORT'; got {address!r}")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except OSError as exc:
        raise ExecutorError(
            f"--address {address!r}: cannot reach {host}:{port} ({exc.strerror or exc}); start the "
            "cluster there with `ray start --head` (ray:// addresses use its client port, 10001 by "
            "default; HOST:PORT its GCS port, 6379), or leave out --address to start Ray on this "
            "machine") from exc


def _task(spec: dict, device: str, checkpoints: str, threads: int, source: str) -> dict:
    """One run on a worker: check the worker's source is the driver's, then train."""
    import torch

    import dpnotes

    torch.set_num_threads(threads)
    state = provenance.source_state()
    if provenance.fingerprint(state) != source:
        raise SourceMismatch(
            f"the Ray worker on {platform.node()} runs dpnotes from {Path(dpnotes.__file__).parent} "
            f"at commit {state['commit']} (changed: {', '.join(state['changed'][:5]) or 'nothing'}), "
            "not the source this sweep was started from; install the same checkout on every node")
    run = RunSpec.from_dict(spec)
    with run_lock(Path(checkpoints), run.id, f"{run.paper} {run.experiment} seed {run.seed}"):
        return local.train_record(run, device=device, checkpoints=Path(checkpoints), progress=False)


class Executor:
    """Runs specs as Ray tasks (see the module docstring).

    ``address``: ``None`` starts a Ray instance on this machine (unless this process is
    already connected to one, which is then used), ``"auto"`` joins the cluster this machine
    belongs to, ``"ray://HOST:PORT"`` or ``"HOST:PORT"`` a remote one.
    """

    def __init__(self, address: str | None = None, gpus_per_run: float = 0.0, cpus_per_run: int = 1,
                 threads: int | None = None, max_retries: int = MAX_RETRIES):
        self.ray = _ray()
        self.address = address
        self.gpus_per_run = validate.nonnegative("gpus_per_run", gpus_per_run)
        self.cpus_per_run = validate.integer("cpus_per_run", cpus_per_run, minimum=1)
        self.threads = validate.integer("threads", threads if threads is not None else cpus_per_run,
                                        minimum=1)
        self.max_retries = validate.integer("max_retries", max_retries, minimum=0)
        if address not in (None, "auto"):
            check_reachable(address)

    def device(self, device: str) -> str:
        """Where a task trains: ``auto`` is CUDA exactly when tasks ask for GPUs."""
        validate.choice("device", device, DEVICES)
        if device == "auto":
            return "cuda" if self.gpus_per_run > 0 else "cpu"
        if device == "cuda" and self.gpus_per_run == 0:
            raise ExecutorError("--device cuda on Ray needs --gpus-per-run > 0 (Ray gives a task a "
                                "GPU only if it asks for one), e.g. --gpus-per-run 0.25")
        return device

    def _connect(self) -> bool:
        """Join the cluster or start a local instance; True if this call started Ray."""
        if self.ray.is_initialized():
            return False
        try:
            self.ray.init(address=self.address, include_dashboard=False, logging_level="WARNING")
        except ConnectionError as exc:
            raise ExecutorError(f"--address {self.address!r}: {exc}; start a cluster with "
                                "`ray start --head`, or leave out --address to start Ray here") from exc
        return True

    def _check_resources(self) -> None:
        nodes = [n["Resources"] for n in self.ray.nodes() if n["Alive"]]
        for kind, asked, flag in (("GPU", self.gpus_per_run, "--gpus-per-run"),
                                  ("CPU", self.cpus_per_run, "--cpus-per-run")):
            most = max((r.get(kind, 0.0) for r in nodes), default=0.0)
            if asked > most:
                raise ExecutorError(f"{flag} {asked:g}: no node of the Ray cluster has {asked:g} "
                                    f"{kind}s (the largest has {most:g}); ask for at most {most:g}, "
                                    "or add nodes that have them")

    def run(self, specs: Iterable[RunSpec], *, device: str, store: Store,
            progress: bool) -> Iterator[dict]:
        specs, device = list(specs), self.device(device)
        state = provenance.source_state()
        for profile in sorted({s.profile for s in specs}):
            provenance.check_clean_for(profile, state)
        started = self._connect()
        try:
            self._check_resources()
            yield from self._submit(specs, device, store, provenance.fingerprint(state))
        finally:
            if started:
                self.ray.shutdown()

    def _submit(self, specs: list[RunSpec], device: str, store: Store, source: str) -> Iterator[dict]:
        ray = self.ray
        task = ray.remote(_task)
        resources = {"num_cpus": self.cpus_per_run, "num_gpus": self.gpus_per_run,
                     "max_retries": self.max_retries, "retry_exceptions": False}
        checkpoints = str(store.root.resolve() / ".checkpoints")
        refs = {task.options(name=f"dpnotes {s.paper} {s.experiment} {s.id}", **resources).remote(
            s.to_dict(), device, checkpoints, self.threads, source): s for s in specs}
        pending, failures = list(refs), []
        try:
            while pending:
                (done,), pending = ray.wait(pending, num_returns=1)
                try:
                    record = ray.get(done)
                except ray.exceptions.RayError as exc:
                    failures.append((refs[done], exc))
                    continue
                local.store_record(store, record)
                yield record
        finally:
            for ref in pending:  # interrupted: the runs' checkpoints stay for the next sweep
                ray.cancel(ref, force=True)
        if failures:
            spec, exc = failures[0]
            cause = getattr(exc, "cause", None) or exc
            message = (f"{len(failures)} of {len(specs)} run(s) failed on Ray (the others are "
                       f"stored); first: {spec.experiment} ({spec.id}): {type(cause).__name__}: {cause}")
            raise (ExecutorError if isinstance(cause, ValueError) else RuntimeError)(message) from exc
