"""Execute the book's notebooks with papermill, each only when what it shows may have changed.

Usage (the Makefile's ``notebooks`` target)::

    python book/execute.py OUT_DIR NOTEBOOK... [-p NAME VALUE]... [--jobs N]

A notebook is executed into ``OUT_DIR/<name>.ipynb`` unless the copy there carries the same
cache key, the SHA-256 of: the notebook, the parameters, the package source (``dpnotes/``,
``pyproject.toml``, ``constraints.txt``) and the run records it can read (``<results>/<paper>/``
for a paper's chapter, the whole store for the others). The key is taken after execution, so
records that the notebook itself ran are part of it. Papermill's injected-parameters cell is
tagged ``remove-cell``: the reader sees the chapter, not its plumbing. The papers' chapters run
``--jobs`` at a time; any other notebook (the scoreboard, which reads every paper's records)
runs after them. Last, the index page's five answers are written to ``OUT_DIR/answers.md``.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import hashlib
import json
import sys
import time
from pathlib import Path

import nbformat
import papermill

REPO = Path(__file__).resolve().parents[1]
SOURCES = ("dpnotes", "pyproject.toml", "constraints.txt")


def _files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    return sorted(p for p in path.rglob("*") if p.is_file() and "__pycache__" not in p.parts)


def cache_key(notebook: Path, parameters: dict, results: Path) -> str:
    """The hash of everything an executed notebook depends on (see the module docstring)."""
    from dpnotes.claims import PAPERS

    records = results / notebook.stem if notebook.stem in PAPERS else results
    digest = hashlib.sha256(json.dumps(parameters, sort_keys=True).encode())
    for path in [notebook, *(f for s in SOURCES for f in _files(REPO / s)), *_files(records)]:
        digest.update(str(path.relative_to(REPO) if path.is_relative_to(REPO) else path).encode())
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def stored_key(executed: Path) -> str | None:
    if not executed.is_file():
        return None
    return nbformat.read(executed, as_version=4).metadata.get("dpnotes", {}).get("cache_key")


def execute(notebook: Path, out: Path, parameters: dict, results: Path) -> bool:
    """Execute ``notebook`` into ``out`` unless its cache key is unchanged; True if executed."""
    if stored_key(out) == cache_key(notebook, parameters, results):
        return False
    nb = nbformat.read(notebook, as_version=4)
    accepted = {k: v for k, v in parameters.items()
                if any("parameters" in c.metadata.get("tags", []) for c in nb.cells)}
    executed = papermill.execute_notebook(str(notebook), str(out), parameters=accepted, cwd=str(REPO),
                                          progress_bar=False)
    for cell in executed.cells:
        tags = cell.metadata.get("tags", [])
        if "injected-parameters" in tags and "remove-cell" not in tags:
            tags.append("remove-cell")
    executed.metadata["dpnotes"] = {"cache_key": cache_key(notebook, parameters, results)}
    nbformat.write(executed, out)
    return True


def _one(notebook: Path, out_dir: Path, parameters: dict, results: Path) -> str:
    start = time.perf_counter()
    ran = execute(notebook.resolve(), (out_dir / notebook.name).resolve(), parameters, results)
    return f"{notebook}: " + (f"executed in {time.perf_counter() - start:.0f} s" if ran else "unchanged, cached")


ANSWERS = "answers.md"  # the index page's five answers (book/intro.md includes it)


def write_answers(path: Path) -> None:
    """The five answers of the index page, from the scoreboard (:func:`dpnotes.report.layout.answers_markdown`),
    rewritten only when they change (so Sphinx rebuilds the index page only then)."""
    from dpnotes.report import layout, scoreboard

    text = layout.answers_markdown(scoreboard())
    if not path.is_file() or path.read_text() != text:
        path.write_text(text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="directory of the executed notebooks")
    parser.add_argument("notebooks", type=Path, nargs="+")
    parser.add_argument("-p", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"),
                        help="a parameter of the chapters (profile, device, yes)")
    parser.add_argument("--jobs", type=int, default=1, help="chapters executed at once (default 1)")
    args = parser.parse_args(argv)
    from dpnotes.claims import PAPERS
    from dpnotes.results import default_root

    results = default_root().resolve()
    args.out.mkdir(parents=True, exist_ok=True)
    parameters = {k: {"True": True, "False": False}.get(v, v) for k, v in args.p}  # -p yes True: a bool
    papers = [nb for nb in args.notebooks if nb.stem in PAPERS]
    with concurrent.futures.ProcessPoolExecutor(max(1, args.jobs)) as pool:
        done = list(pool.map(_one, papers, [args.out] * len(papers), [parameters] * len(papers),
                             [results] * len(papers)))
    done += [_one(nb, args.out, parameters, results) for nb in args.notebooks if nb not in papers]
    write_answers(args.out / ANSWERS)
    print("\n".join(done), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
