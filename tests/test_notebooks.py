"""The book's notebooks: parameters, thinness, no typed-in paper numbers, and the nbval references.

The references in ``tests/notebooks/`` are the notebooks executed at the smoke profile
(``make nbval-refresh``); ``make test`` re-executes them with ``pytest --nbval-lax`` and
compares the outputs of the cells marked ``# NBVAL_CHECK_OUTPUT``.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from dpnotes import claims
from dpnotes.claims import PAPERS

REPO = Path(__file__).resolve().parents[1]
REFERENCES = REPO / "tests" / "notebooks"
# source notebook -> its nbval reference
PAIRS = {REPO / "notebooks" / f"{p}.ipynb": REFERENCES / f"{p}.ipynb" for p in PAPERS}
PAIRS[REPO / "notebooks" / "audit.ipynb"] = REFERENCES / "audit.ipynb"  # the audit chapter (no paper of its own)
PAIRS[REPO / "notebooks" / "compare.ipynb"] = REFERENCES / "compare.ipynb"  # the comparison chapter (beyond the papers)
STUDY_CHAPTERS = ("audit", "compare")
PAIRS[REPO / "book" / "scoreboard.ipynb"] = REFERENCES / "scoreboard.ipynb"
REFRESH = "run `make nbval-refresh`"


def read(path: Path) -> nbformat.NotebookNode:
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    return nb


def tagged(nb, tag: str) -> list:
    return [c for c in nb.cells if tag in c.metadata.get("tags", [])]


def assignments(source: str) -> dict:
    namespace: dict = {}
    exec(compile(source, "<parameters>", "exec"), {}, namespace)
    return namespace


def test_one_notebook_per_paper_and_the_audit_and_comparison_chapters():
    assert sorted(p.stem for p in (REPO / "notebooks").glob("*.ipynb")) == sorted((*PAPERS, *STUDY_CHAPTERS))


@pytest.mark.parametrize("study", STUDY_CHAPTERS)
def test_study_chapter_starts_with_parameters_then_title_and_is_in_the_book(study):
    nb = read(REPO / "notebooks" / f"{study}.ipynb")
    first, second = nb.cells[0], nb.cells[1]
    assert tagged(nb, "parameters") == [first] and first.cell_type == "code"
    assert assignments(first.source) == {"profile": "quick", "device": "cpu", "run_missing": False, "yes": False}
    assert second.cell_type == "markdown" and second.source.startswith("# ")
    assert f"book/executed/{study}" in (REPO / "_toc.yml").read_text()
    assert f"({study}.ipynb)" in "".join(c.source for c in read(REPO / "book" / "scoreboard.ipynb").cells)


@pytest.mark.parametrize("paper", PAPERS)
def test_notebook_starts_with_parameters_then_title(paper):
    nb = read(REPO / "notebooks" / f"{paper}.ipynb")
    first, second = nb.cells[0], nb.cells[1]
    assert first.cell_type == "code" and "parameters" in first.metadata.get("tags", [])
    assert tagged(nb, "parameters") == [first]
    params = assignments(first.source)
    assert params == {"profile": "quick", "device": "cpu", "run_missing": True, "seed": 0, "yes": False}
    assert second.cell_type == "markdown" and second.source.startswith("# ")
    assert nb.metadata.kernelspec.name == "python3"


@pytest.mark.parametrize("paper", PAPERS)
def test_chapter_opens_with_title_answer_table_and_a_paragraph_and_hides_its_plumbing(paper):
    nb = read(REPO / "notebooks" / f"{paper}.ipynb")
    params, title, held, grid, paragraph = nb.cells[:5]
    assert {"parameters", "remove-cell"} <= set(params.metadata["tags"])
    assert title.source.startswith("# ") and "\n" not in title.source.strip(), "the title alone"
    assert held.source.endswith(f'layout.paper_what_held("{paper}")'), "then the What held box"
    assert held.metadata["tags"] == ["remove-input"]
    assert grid.source.endswith(f'layout.paper_grids("{paper}")'), "then the paper's main table, paper | ours"
    assert grid.source.endswith(f'layout.paper_grids("{paper}")'), "then the paper's main table, paper | ours"
    assert paragraph.cell_type == "markdown" and len(paragraph.source.split("\n\n")) == 1, "then one paragraph"
    untagged = [c.source[:60] for c in nb.cells[1:] if c.cell_type == "code"
                and not {"remove-input", "hide-input", "remove-cell"} & set(c.metadata.get("tags", []))]
    assert not untagged, f"code shown to the reader unfolded: {untagged}"


@pytest.mark.parametrize("paper", PAPERS)
def test_notebook_calls_the_library_for_its_own_paper(paper):
    code = "\n".join(c.source for c in read(REPO / "notebooks" / f"{paper}.ipynb").cells
                     if c.cell_type == "code")
    assert f'PAPER = "{paper}"' in code
    assert "run_paper(PAPER, profile, device=device, run_missing=run_missing, yes=yes, caller=\"notebook\"" in code
    assert "html.paper_claims(PAPER)" in code
    assert "experiments.module(PAPER).TITLE" in code


def printed_numbers() -> dict[str, str]:
    """Values of registered claims distinctive enough to spot if typed in: a decimal point and
    at least three digits (``"0.83"``, ``"98.35"``)."""
    return {c.value: c.id for c in claims.load()
            if c.number is not None and "." in c.value and sum(ch.isdigit() for ch in c.value) >= 3}


def test_number_spotter_finds_a_typed_in_value():
    value = next(iter(printed_numbers()))
    assert re.search(rf"(?<![\d.]){re.escape(value)}(?!\d)", f"accuracy {value} %")


def test_no_paper_number_typed_into_notebooks_or_pages():
    numbers = printed_numbers()
    assert numbers, "the claims registry has no values to look for"
    pattern = re.compile(r"(?<![\d.])(" + "|".join(map(re.escape, numbers)) + r")(?!\d)")
    texts = {p: "\n".join(c.source for c in read(p).cells) for p in PAIRS}
    texts.update({p: p.read_text() for p in (REPO / "book").glob("*.md")})
    # The README's measured benchmark figures (ours, not the papers') are fenced off, and so are its blocks
    # generated by the library (rules, plan: tests/test_readme_generated.py holds them to the generator).
    texts[REPO / "README.md"] = re.sub(r"<!-- ([\w-]+) -->.*?<!-- /\1 -->", "",
                                       (REPO / "README.md").read_text(), flags=re.S)
    found = {f"{p.relative_to(REPO)}: {m.group(1)} ({numbers[m.group(1)]})"
             for p, text in texts.items() for m in pattern.finditer(text)}
    assert not found, f"paper numbers belong in the claims registry only: {sorted(found)}"


@pytest.mark.parametrize("source", list(PAIRS), ids=lambda p: p.stem)
def test_reference_notebook_matches_its_source(source):
    reference = PAIRS[source]
    assert reference.is_file(), f"{reference.relative_to(REPO)} is missing: {REFRESH}"
    src, ref = read(source), read(reference)
    assert "papermill" in ref.metadata, f"{reference.name} was not executed by papermill: {REFRESH}"
    injected = tagged(ref, "injected-parameters")
    if tagged(src, "parameters"):
        assert len(injected) == 1 and assignments(injected[0].source) == {"profile": "smoke"}, REFRESH
    else:
        assert not injected
    cells = [(c.cell_type, c.source) for c in ref.cells if c not in injected]
    assert cells == [(c.cell_type, c.source) for c in src.cells], f"{reference.name} is stale: {REFRESH}"


@pytest.mark.parametrize("reference", list(PAIRS.values()), ids=lambda p: p.stem)
def test_reference_notebook_executed_cleanly_with_stable_checked_outputs(reference):
    nb = read(reference)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.execution_count for c in code), f"{reference.name} has unexecuted cells: {REFRESH}"
    assert not [o for c in code for o in c.outputs if o.output_type == "error"]
    checked = [c for c in code if "# NBVAL_CHECK_OUTPUT" in c.source]
    assert checked and all(c.outputs for c in checked), "nbval would compare nothing"
    text = "\n".join(str(o.get("text", "")) + str(o.get("data", {}).get("text/plain", ""))
                     for c in checked for o in c.outputs)
    assert not re.search(r"/(tmp|work|home|root)/|\d{4}-\d\d-\d\dT\d\d:\d\d", text), (
        "a checked output holds a path or a timestamp, which differs from run to run")


# --------------------------------------------------------------------------------------
# Thin chapters: every code cell is a short library call, and no notebook reaches into a
# private name (the findings live in dpnotes.report.<paper>, unit-tested there).

MAX_CELL_LINES = 6  # statements' lines per code cell, imports, comments and blank lines not counted
NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))


def cell_lines(source: str) -> int:
    """Lines of a code cell that are not blank, not comments and not part of an import statement."""
    import ast

    tree = ast.parse(source)
    imports = {n for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))
               for n in range(node.lineno, node.end_lineno + 1)}
    return sum(1 for n, line in enumerate(source.splitlines(), 1)
               if line.strip() and not line.strip().startswith("#") and n not in imports)


def private_names(source: str) -> list[str]:
    """Private names a cell uses: ``x._name`` attributes and ``from x import _name`` / ``import _x``."""
    import ast

    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            out.append(f".{node.attr}")
        elif isinstance(node, ast.ImportFrom):
            out += [f"{'.' * node.level}{node.module or ''}.{a.name}" for a in node.names
                    if a.name.startswith("_") or any(p.startswith("_") for p in (node.module or "").split("."))]
        elif isinstance(node, ast.Import):
            out += [a.name for a in node.names if any(p.startswith("_") for p in a.name.split("."))]
    return out


def code_cells(path: Path) -> list[str]:
    return [c.source for c in read(path).cells if c.cell_type == "code"]


def test_the_checks_see_a_long_cell_and_a_private_name():
    assert cell_lines("import numpy as np\nfrom a import (b,\n    c)\n\n# note\nx = 1\ny = np.f(x)") == 2
    assert cell_lines("\n".join(f"x{i} = {i}" for i in range(MAX_CELL_LINES + 1))) > MAX_CELL_LINES
    assert sorted(private_names("X._table3_cells()\nfrom a.b import _c\nimport a._b\nx.__class__")) == [
        "._table3_cells", "a._b", "a.b._c"]
    assert private_names("report.findings(stored).show()\nfrom dpnotes.report import dpis") == []


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_uses_no_private_name(path):
    found = {name for source in code_cells(path) for name in private_names(source)}
    assert not found, f"{path.name} reaches into private names {sorted(found)}: call the report module instead"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_notebook_cell_is_a_short_library_call(path):
    long = [f"{cell_lines(s)} lines: {s.strip().splitlines()[0][:60]}" for s in code_cells(path)
            if cell_lines(s) > MAX_CELL_LINES]
    assert not long, f"{path.name}: cells over {MAX_CELL_LINES} lines (move the logic to dpnotes.report): {long}"
