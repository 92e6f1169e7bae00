"""The book's hand-written prose states no result: no count of seeds, runs, cells or claims, no measured
time or difference, and no position ("above", "below") that a reordered page makes false.

Those are what went stale before (issue 48: "20 more runs answer 34 more cells", "the tables above" that
had moved below, "seed 0 ... the other four seeds" when three to five were shown): a count or a position
belongs in a generated cell (from the records) or nowhere. The rule reads every markdown cell of
``notebooks/*.ipynb`` and ``book/*.ipynb`` with its maths, code spans, roles and link targets removed
(equations, identifiers and citations are not prose), so that equation, table and section numbers, years in
citations and the papers' settings in maths pass. :func:`test_the_rule_catches_planted_sentences` shows it
failing on sentences made to break it, and passing sentences that only look alike.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted([*(REPO / "notebooks").glob("*.ipynb"), *(REPO / "book").glob("*.ipynb")])

_NUMBER_WORDS = "one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|a few|several"
_DIGITS = r"(?<![\d.])\d[\d,]*(?:\s*[-–]\s*\d[\d,]*)?(?![\d.])"
_COUNT = rf"(?:{_DIGITS}|\b(?:{_NUMBER_WORDS}))"
# a number that names a table, figure, equation or section is no count ("Table 3 runs")
_REFERENCE = re.compile(r"(?:Tables?|Figures?|Fig\.|Eqs?\.|Sections?|Sec\.|App\.|Appendix|Algorithms?|Alg\.|"
                        r"Theorems?|Lemmas?|Corollary|Observation|rows?|columns?)\s*$", re.I)
# (what, pattern): each names a kind of stated result
RULES = (
    ("a position word (name the table or figure, or say nothing)", re.compile(r"\b(?:above|below)\b", re.I)),
    ("a count of seeds, runs, cells, claims or records",
     re.compile(rf"{_COUNT}\s+(?:more\s+|further\s+|other\s+|paired\s+|planned\s+)*"
                r"(?:seeds?|runs?|cells?|claims?|records?|verdicts?)\b", re.I)),
    ("a seed named by number", re.compile(r"\bseeds?\s+\d", re.I)),
    ("a measured time", re.compile(rf"{_DIGITS}\s*(?:CPU|GPU)?[- ]?(?:hours?|minutes?|min|seconds?|days?|s)\b"
                                   r"(?!\S*\))|\bsamples/s\b", re.I)),
    ("a signed difference or a percentage with decimals",
     re.compile(r"(?<![\w.])[+−]\d+(?:\.\d+)?\b|\b\d+\.\d+\s*(?:%|points?\b)")),
)


def prose(markdown: str) -> str:
    """``markdown`` without what is not prose: maths, code, MyST roles and directives' options, link
    targets, HTML comments and tags."""
    text = re.sub(r"<!--.*?-->", " ", markdown, flags=re.S)
    text = re.sub(r"```.*?```", " ", text, flags=re.S)
    text = re.sub(r"\$\$.*?\$\$", " ", text, flags=re.S)
    text = re.sub(r"(?<!\\)\$(?:\\.|[^$\\])+\$", " MATH ", text)
    text = re.sub(r"\{[\w:-]+\}`[^`]*`", " REF ", text)  # {cite:p}`key`, {ref}`label`
    text = re.sub(r"`[^`]*`", " CODE ", text)
    text = re.sub(r"\]\([^)]*\)", "]", text)  # [text](target): the target is no prose
    return re.sub(r"<[^>]+>", " ", text)


def stated_results(markdown: str) -> list[str]:
    """Every stated result in ``markdown``: ``what: "...sentence around it..."``."""
    text = prose(markdown)
    found = []
    for what, pattern in RULES:
        for m in pattern.finditer(text):
            if what != RULES[0][0] and _REFERENCE.search(text[max(0, m.start() - 20):m.start()]):
                continue
            around = " ".join(text[max(0, m.start() - 40):m.end() + 30].split())
            found.append(f"{what}: {m.group(0)!r} in '…{around}…'")
    return found


PLANTED = (  # each must be caught
    "Each Table 2 default is the CPU part's run, so 20 more runs answer 34 more cells.",
    "The tables above give every value.",
    "The findings below say why.",
    "We ran seed 0 only; the other four seeds need a GPU.",
    "Our cells are single runs too: one seed.",
    "The gain is +0.13 points on 3 paired seeds.",
    "A CIFAR-10 run takes about 19 CPU hours.",
    "Accuracy 98.35 % at the paper's budget.",
    "Each verdict rests on three seeds.",
    "Seeds 0-2 of MNIST ran.",
    "Table 3 needs 20 runs.",
)
ALLOWED = (  # each only looks like a result and must pass
    "Table 3's $\\varepsilon = 1$ column, Eq. 17 and Section 4.2 (Lemma 2.5's conversion).",
    "The lower bound of Chua et al. (ICML 2024) {cite:p}`chua2024private`.",
    "1. **exact audits** of the mechanisms;\n2. a white-box audit.",
    "With $T = 234$ steps and $\\delta = 10^{-5}$, see `dpnotes run dpis --seeds 0,1,2`.",
    "Every claim's seeds come from the seeds plan, on the [Scoreboard](scoreboard.ipynb) page.",
    "The paper's Figure 3 and Appendix B; MovieLens-1M and CIFAR-100.",
    "The Table 3 runs and the Table 2 cell's spec; the missing ones are run; the 0.7 run.",
)


@pytest.mark.parametrize("sentence", PLANTED)
def test_the_rule_catches_planted_sentences(sentence):
    assert stated_results(sentence), f"the prose rule let a stated result through: {sentence!r}"


@pytest.mark.parametrize("sentence", ALLOWED)
def test_the_rule_passes_what_is_not_a_result(sentence):
    assert not stated_results(sentence), stated_results(sentence)


def test_the_rule_reads_every_book_notebook():
    assert {p.stem for p in NOTEBOOKS} >= {"dplis", "dpis", "gdp", "labeldp", "sadpsgd", "audit", "scoreboard"}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_result_typed_into_notebook_prose(path):
    nb = nbformat.read(path, as_version=4)
    found = [f"cell {i}: {hit}" for i, cell in enumerate(nb.cells) if cell.cell_type == "markdown"
             for hit in stated_results(cell.source)]
    assert not found, (f"{path.relative_to(REPO)} states results in its prose (generate them from the records in "
                       "a cell, or leave them out):\n  " + "\n  ".join(found))
