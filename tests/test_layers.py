"""The layering of dpnotes: no import cycle, and no module imports a higher layer.

The import graph is static: every ``import``/``from ... import`` statement of every module
of the package, parsed with :mod:`ast`, wherever it stands (module level, inside functions,
under ``if TYPE_CHECKING:``). Importing ``a.b.c`` also runs the ``__init__`` of ``a.b``, so
an import counts as an edge to the packages above its target too, except to the importer's
own packages (those are already being imported).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import dpnotes

PACKAGE = Path(dpnotes.__file__).resolve().parent
ROOT = PACKAGE.name

# Top-level parts of dpnotes, low to high: a module may import its own layer or lower ones.
# Parts not written yet (ledger, methods, spec) have their place already.
LAYERS = (
    # record: the typed view of a run record; call_memo: one command's memo (dpnotes scoreboard);
    # calc_cache: the scoreboard's on-disk memo of pure values, keyed by cache_keys' code version;
    # phases: the training loop's phase timers; record_fields: a record's fields checked on read;
    # digest_file: files (checkpoints, data caches) carrying the sha256 of their content
    ("validate", "atomic", "digest_file", "jsonio", "record", "record_fields", "call_memo", "cache_keys",
     "calc_cache", "phases"),
    ("claims", "ledger"),
    ("accounting", "mechanisms"),
    ("data", "models"),
    ("train",),
    ("methods",),
    # repriced: the committed records whose eps was re-priced, by file digest (a fresh clone trusts them)
    ("results", "spec", "provenance", "record_checks", "record_manifest", "reprice_cache", "repriced"),
    ("experiments",),
    ("executors", "preflight"),  # preflight: device check, plan and confirmation before training
    ("runner", "campaign"),  # campaign: picks and runs paper-profile runs through the runner
    # audit: the audit chapter's study, next to the report layer it draws with;
    # scoreboard_cache: the verified on-disk cache of the CLI scoreboard's output
    ("report", "audit", "scoreboard_cache"),
    ("cli", "bench", "bench_e2e"),
)
LAYER = {part: level for level, parts in enumerate(LAYERS) for part in parts}
EXEMPT = {ROOT, f"{ROOT}.__main__"}  # the package root and the command-line entry point


def modules(package: Path = PACKAGE) -> dict[str, Path]:
    """Dotted module name -> source file, for every module of ``package``."""
    out = {}
    for path in sorted(package.rglob("*.py")):
        parts = (package.name, *path.relative_to(package).with_suffix("").parts)
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def imported(name: str, path: Path, known: set[str]) -> set[str]:
    """The modules among ``known`` that module ``name`` (source ``path``) imports, anywhere in it."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module
            for alias in node.names:
                submodule = f"{source}.{alias.name}"
                out.add(submodule if submodule in known else source)
    targets = set()
    for target in out:
        parts = target.split(".")
        targets.update(".".join(parts[:i]) for i in range(1, len(parts) + 1)
                       if not name.startswith(".".join(parts[:i]) + ".") or i == len(parts))
    return {t for t in targets if t in known and t != name}


def import_graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    """Module -> the modules of the package it imports."""
    mods = modules(package)
    return {name: imported(name, path, set(mods)) for name, path in mods.items()}


def tangles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected parts of ``graph`` that hold a cycle (Tarjan's algorithm, iteratively)."""
    index, low, stack, on_stack, parts = {}, {}, [], set(), []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                part = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    part.add(member)
                    if member == node:
                        break
                if len(part) > 1 or node in graph.get(node, ()):
                    parts.append(part)
    return parts


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle (``[a, b, ..., a]``) through each of the :func:`tangles` of ``graph``."""
    return [_cycle_through(min(part), part, graph) for part in tangles(graph)]


def _cycle_through(first: str, part: set[str], graph: dict[str, set[str]]) -> list[str]:
    """A shortest path ``first -> ... -> first`` inside ``part`` (breadth first)."""
    previous, frontier = {}, [first]
    while frontier:
        following = []
        for node in frontier:
            for child in sorted(graph.get(node, ())):
                if child == first:
                    path = [node]
                    while path[-1] != first:
                        path.append(previous[path[-1]])
                    return [first, *reversed(path[:-1]), first] if len(path) > 1 else [first, first]
                if child in part and child not in previous:
                    previous[child] = node
                    following.append(child)
        frontier = following
    raise AssertionError(f"{first} is on no cycle within {sorted(part)}")


def layer_part(module: str) -> str:
    """The top-level part of dpnotes a module belongs to (``dpnotes.train.loop`` -> ``train``)."""
    return module.split(".")[1]


# --------------------------------------------------------------------------------------
# The rules.

def test_no_import_cycle_in_dpnotes():
    graph = import_graph()
    found = [f"{' -> '.join(_cycle_through(min(part), part, graph))}  (tangled: {', '.join(sorted(part))})"
             for part in tangles(graph)]
    assert not found, "import cycles in dpnotes:\n" + "\n".join(found)


def test_every_part_of_dpnotes_has_a_layer():
    parts = {layer_part(m) for m in modules() if m not in EXEMPT}
    assert parts <= set(LAYER), f"give these parts a layer in LAYERS: {sorted(parts - set(LAYER))}"


def test_no_module_imports_a_higher_layer():
    upward = sorted(
        f"{module} ({layer_part(module)}, layer {LAYER[layer_part(module)]}) imports {target} "
        f"({layer_part(target)}, layer {LAYER[layer_part(target)]})"
        for module, targets in import_graph().items() if module not in EXEMPT
        for target in targets if target not in EXEMPT
        and LAYER[layer_part(target)] > LAYER[layer_part(module)])
    assert not upward, "imports of a higher layer:\n" + "\n".join(upward)


# --------------------------------------------------------------------------------------
# The checks check: a synthetic package.

@pytest.fixture
def toy(tmp_path) -> Path:
    pkg = tmp_path / "toy"
    (pkg / "low").mkdir(parents=True)
    (pkg / "high").mkdir()
    files = {
        "__init__.py": "",
        "low/__init__.py": "",
        "low/a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from toy.low.b import B\n",
        "low/b.py": "def f():\n    from . import a\n    return a\n",
        "high/__init__.py": "from toy.high import c\n",
        "high/c.py": "import toy.low.a\nfrom toy.low import b as bee\n",
    }
    for name, text in files.items():
        (pkg / name).write_text(text)
    return pkg


def test_graph_sees_type_checking_function_and_relative_imports(toy):
    graph = import_graph(toy)
    assert graph["toy.low.a"] == {"toy.low.b"}  # under TYPE_CHECKING
    assert graph["toy.low.b"] == {"toy.low.a"}  # inside a function, relative
    assert graph["toy.high.c"] == {"toy.low", "toy.low.a", "toy.low.b"}  # with the package above
    assert graph["toy.high"] == {"toy.high.c"}  # its own submodule, no edge back to itself


def test_cycles_are_found_and_printed_as_paths(toy):
    assert cycles(import_graph(toy)) == [["toy.low.a", "toy.low.b", "toy.low.a"]]
    assert cycles({"x": {"x"}}) == [["x", "x"]]
    assert cycles({"x": {"y"}, "y": {"z"}, "z": set()}) == []
    assert cycles({"p": {"q"}, "q": {"r"}, "r": {"p", "q"}}) == [["p", "q", "r", "p"]]
