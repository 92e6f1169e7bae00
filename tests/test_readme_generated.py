"""The README's generated blocks are what the library prints now: the verdict rules
(:func:`dpnotes.report.verdicts.rules_markdown`), the seeds plan (:func:`dpnotes.report.seeds_plan.markdown`)
and the audits' table (:func:`dpnotes.audit.step_report.readme_block`, from the committed records).
Regenerate them after changing either (the block between the markers)."""

import os
import re

import pytest

from dpnotes.report import seeds_plan
from dpnotes.report.verdicts import rules_markdown

README = os.path.join(os.path.dirname(__file__), os.pardir, "README.md")


def block(name: str) -> str:
    text = open(README, encoding="utf-8").read()
    found = re.search(rf"<!-- {name} -->\n(.*?)\n<!-- /{name} -->", text, re.S)
    assert found, f"README has no <!-- {name} --> block"
    return found.group(1)


def _audit_teeth():
    from dpnotes.audit import step_report

    return step_report.readme_block("paper")


@pytest.mark.parametrize("name, make", [("rules", lambda: rules_markdown().split("\n", 2)[2]),
                                         ("plan", seeds_plan.markdown), ("audit-teeth", _audit_teeth)])
def test_a_generated_readme_block_is_current(name, make):
    assert block(name) == make(), f"README block {name!r} is stale: regenerate it"
