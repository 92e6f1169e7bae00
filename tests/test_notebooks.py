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


def test_one_notebook_per_paper_and_the_audit_chapter():
    assert sorted(p.stem for p in (REPO / "notebooks").glob("*.ipynb")) == sorted((*PAPERS, "audit"))


@pytest.mark.parametrize("paper", PAPERS)
def test_notebook_starts_with_parameters_then_title(paper):
    nb = read(REPO / "notebooks" / f"{paper}.ipynb")
    first, second = nb.cells[0], nb.cells[1]
    assert first.cell_type == "code" and "parameters" in first.metadata.get("tags", [])
    assert tagged(nb, "parameters") == [first]
    params = assignments(first.source)
    assert params == {"profile": "quick", "device": "cpu", "run_missing": True, "seed": 0}
    assert second.cell_type == "markdown" and second.source.startswith("# ")
    assert nb.metadata.kernelspec.name == "python3"


@pytest.mark.parametrize("paper", PAPERS)
def test_chapter_opens_with_title_what_held_and_a_paragraph_and_hides_its_plumbing(paper):
    nb = read(REPO / "notebooks" / f"{paper}.ipynb")
    params, title, held, paragraph = nb.cells[:4]
    assert {"parameters", "remove-cell"} <= set(params.metadata["tags"])
    assert title.source.startswith("# ") and "\n" not in title.source.strip(), "the title alone"
    assert held.source.endswith(f'layout.paper_what_held("{paper}")'), "then the What held box"
    assert held.metadata["tags"] == ["remove-input"]
    assert paragraph.cell_type == "markdown" and len(paragraph.source.split("\n\n")) == 1, "then one paragraph"
    untagged = [c.source[:60] for c in nb.cells[1:] if c.cell_type == "code"
                and not {"remove-input", "hide-input", "remove-cell"} & set(c.metadata.get("tags", []))]
    assert not untagged, f"code shown to the reader unfolded: {untagged}"


@pytest.mark.parametrize("paper", PAPERS)
def test_notebook_calls_the_library_for_its_own_paper(paper):
    code = "\n".join(c.source for c in read(REPO / "notebooks" / f"{paper}.ipynb").cells
                     if c.cell_type == "code")
    assert f'PAPER = "{paper}"' in code
    assert "run_paper(PAPER, profile, device=device, run_missing=run_missing" in code
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
    # The README's measured benchmark figures (ours, not the papers') are fenced off.
    texts[REPO / "README.md"] = re.sub(r"<!-- measured -->.*?<!-- /measured -->", "",
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
