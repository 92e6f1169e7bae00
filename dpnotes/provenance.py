"""Where a record's numbers came from: the source tree, the device, the libraries.

A copy of the tree without ``.git`` (e.g. the working tree sent to a lent GPU machine) can
still prove its commit: :func:`write_manifest` records, from a clean checkout, the commit and
the git blob hash of every tracked file; with ``$DPNOTES_SOURCE_MANIFEST`` pointing at that
file, :func:`source_state` re-hashes the copy's files and calls it clean only if every one
matches.

A run is made of one or more *segments* (a run killed and resumed has two): each segment
records the commit it ran at, whether the tree had uncommitted changes, when it started,
its wall time, its device (with the torch thread count on a CPU), the CPU model (``cpu``;
records made before it was recorded lack it), its vector instruction sets (``isa``: the kernels
torch dispatches to and the CPU's vector flags, :func:`cpu_isa`; from 2026-11-28) and the
library versions. Records of the ``paper`` profile may
only be written from a clean tree (:func:`check_clean_for`); results files do not count as
changes (they are data, not code).
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import platform
import subprocess
from pathlib import Path

# Paths whose changes do not affect what a run computes.
DATA_PATHS = ("results/",)
CLEAN_PROFILES = ("paper",)


def library_versions() -> dict[str, str]:
    """Versions of the libraries a record's numbers depend on."""
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": platform.python_version()}
    for name in ("dpnotes", "torch", "numpy", "scipy", "opacus", "dp-accounting", "prv-accountant"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            pass
    return out


def _git(args: list[str], cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout


def blob_hash(data: bytes) -> str:
    """Git's object id of a file's content: sha1 of ``b"blob <size>\\0" + data``."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def write_manifest(out: Path, path: Path | None = None) -> dict:
    """Write ``{"commit", "files": {path: blob hash}}`` of the clean checkout holding ``path``."""
    cwd = Path(path or Path(__file__).parent)
    state = source_state(cwd)
    if state["commit"] is None or state["dirty"]:
        raise RuntimeError(f"a source manifest is written from a clean git checkout only: {state['changed'][:5]}")
    files = {}
    for line in _git(["ls-files", "-s", "--full-name"], cwd).splitlines():
        meta, name = line.split("\t", 1)
        files[name] = meta.split()[1]
    manifest = {"commit": state["commit"], "files": files}
    Path(out).write_text(json.dumps(manifest, indent=0, sort_keys=True))
    return manifest


def _state_from_manifest(manifest_path: Path, root: Path) -> dict:
    manifest = json.loads(Path(manifest_path).read_text())
    changed = [name for name, blob in manifest["files"].items() if not name.startswith(DATA_PATHS)
               and (not (root / name).is_file() or blob_hash((root / name).read_bytes()) != blob)]
    return {"commit": manifest["commit"], "dirty": bool(changed), "changed": changed}


def source_state(path: Path | None = None) -> dict:
    """``{"commit": sha or None, "dirty": bool, "changed": [paths]}`` of the checkout holding
    the package (changes under :data:`DATA_PATHS` ignored). Outside git: verified against
    ``$DPNOTES_SOURCE_MANIFEST`` if set, else ``commit`` None and dirty."""
    cwd = Path(path or Path(__file__).parent)
    try:
        commit = _git(["rev-parse", "HEAD"], cwd).strip()
        status = _git(["status", "--porcelain", "--untracked-files=no"], cwd)
    except (OSError, subprocess.CalledProcessError):
        manifest = os.environ.get("DPNOTES_SOURCE_MANIFEST")
        if manifest:
            root = Path(path) if path is not None else Path(__file__).resolve().parents[1]
            return _state_from_manifest(Path(manifest), root)
        return {"commit": None, "dirty": True, "changed": ["(not a git checkout)"]}
    changed = [line[3:] for line in status.splitlines() if line[3:] and not line[3:].startswith(DATA_PATHS)]
    return {"commit": commit, "dirty": bool(changed), "changed": changed}


def fingerprint(state: dict, root: Path | None = None) -> str:
    """A hash of the source a run executes, from its :func:`source_state`: the commit plus the
    path and content of every changed file, so two copies agree only if they would compute the
    same (used to refuse workers that run another version of dpnotes than the sweep's)."""
    root = Path(root) if root is not None else Path(__file__).resolve().parents[1]
    h = hashlib.sha256(json.dumps([state["commit"], sorted(state["changed"])]).encode())
    for name in sorted(state["changed"]):
        path = root / name
        h.update(blob_hash(path.read_bytes()).encode() if path.is_file() else b"missing")
    return h.hexdigest()


class DirtyTree(RuntimeError):
    """A paper-profile record was asked for from a tree with uncommitted changes."""


def check_clean_for(profile: str, state: dict) -> None:
    """Refuse to produce a ``paper``-profile record from a tree with uncommitted changes."""
    if profile in CLEAN_PROFILES and state["dirty"]:
        shown = ", ".join(state["changed"][:5]) + (" ..." if len(state["changed"]) > 5 else "")
        raise DirtyTree(
            f"profile {profile!r} records are written only from a clean git tree (commit first): "
            f"uncommitted changes in {shown}")


def device_name(device: str) -> str:
    """A human-readable name of the device a segment ran on."""
    import torch

    if device.startswith("cuda"):
        return f"cuda: {torch.cuda.get_device_name()}"
    return f"cpu: {platform.processor() or platform.machine()}, {torch.get_num_threads()} threads"


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo`` on Linux, else what :mod:`platform` knows): float
    rounding, and so a run's numbers, may differ between CPU models (vector units) as between
    thread counts."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.lower().startswith(("model name", "hardware", "cpu model")) and ":" in line:
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


# The CPU flags that select vectorised kernels (x86-64 and ARM), widest last.
ISA_FLAGS = ("sse4_2", "avx", "fma", "avx2", "avx512f", "avx512bw", "avx512_vnni", "avx512_bf16", "amx_tile",
             "asimd", "sve", "sve2")


def cpu_isa() -> str:
    """The vector instruction sets behind a CPU run's float rounding: the kernel set torch
    dispatches to (``torch.backends.cpu.get_cpu_capability()``: ``AVX512``, ``AVX2``, ...) and
    the CPU's flags among :data:`ISA_FLAGS`, e.g. ``"torch AVX512; avx2 avx512f fma"``."""
    flags: set[str] = set()
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.lower().startswith(("flags", "features")) and ":" in line:
                    flags = set(line.split(":", 1)[1].split())
                    break
    except OSError:
        pass
    try:
        import torch

        kernels = torch.backends.cpu.get_cpu_capability()
    except (ImportError, AttributeError, RuntimeError):
        kernels = "unknown"
    return f"torch {kernels}; " + (" ".join(f for f in ISA_FLAGS if f in flags) or "no vector flags known")


def now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def segment(state: dict, device: str, started: str, wall_s: float) -> dict:
    """One segment of a run (see the module docstring)."""
    return {"commit": state["commit"], "dirty": state["dirty"], "started": started,
            "wall_s": round(wall_s, 3), "device": device_name(device), "cpu": cpu_model(),
            "isa": cpu_isa(), "versions": library_versions()}
