"""The "What held" box that opens a chapter (:func:`what_held`: a paper's headline claims, paper against
ours with seeds, fidelity and verdict, and one sentence from :func:`answer`) and the five answers, linked, for the
index page (:func:`answers`).
"""

from __future__ import annotations

import math
import re
import statistics
from collections import Counter
from html import escape
from typing import Callable

from dpnotes.report import labels
from dpnotes.report.headlines import HEADLINES, TITLES
from dpnotes.report.html import BADGES, Html, more
from dpnotes.report.html import STYLE as HTML_STYLE

from .cells import STYLE, _mark, _reason, basis, ours_text, paper_text

ANSWERS = ("holds", "holds in part", "does not hold", "undecided")
COLOURS = {"holds": "#1a7f37", "holds in part": "#8250df", "does not hold": "#cf222e", "undecided": "#9a6700"}


def answer_word(central: list[str]) -> str:
    """The answer from the verdicts of a paper's central claims (:data:`RULE`)."""
    yes, no = central.count("reproduced"), central.count("not_reproduced")
    if central and yes == len(central):
        return "holds"
    if yes and no:
        return "holds in part"
    if no and not yes and 2 * no >= len(central):
        return "does not hold"
    return "undecided"


def answer(rows: list[dict], paper: str) -> tuple[str, str]:
    """Does the paper's main claim hold here? ``(answer, sentence)`` from the verdicts of its
    central claims by :data:`RULE` (one of :data:`ANSWERS`), and its headline claims' counts."""
    spec = HEADLINES[paper]
    by_id = {r["id"]: r for r in rows}
    verdicts = [by_id[cid]["verdict"] for cid, _ in spec.claims]
    central = verdicts[:spec.central]
    word = answer_word(central)
    counts = Counter(verdicts)
    told = ", ".join(f"{counts[v]} {BADGES[v][0]}" for v in BADGES if counts[v])
    c = Counter(central)
    central_told = ", ".join(f"{c[v]} {BADGES[v][0]}" for v in BADGES if c[v])
    sentence = (f"{spec.question} Here: **{word}**. Of its {spec.central} central claim"
                f"{'s' if spec.central != 1 else ''} {central_told}; of its {len(verdicts)} headline claims {told}.")
    return word, sentence


def _why_open(row: dict) -> str:
    """Why an inconclusive claim is open, in a few words (and what would decide it, from the seeds plan)."""
    from dpnotes.experiments import plan

    if row.get("planned") and row.get("seeds") is not None and row["seeds"] < row["planned"]:
        return f"{row['seeds']} of {row['planned']} planned seeds run"
    rows = [r for r in plan.current().rows if r.claim == row["id"] and r.where == "none"]
    if rows:
        r = rows[0]
        return ("not decidable within budget: " + (f"more than {plan.N_MAX} seeds" if r.needed is None else
                                                     f"{r.needed} seeds, {r.cpu_h:.0f} CPU-h or "
                                                     f"{r.gpu_h or 0:.1f} GPU-h"))
    if row.get("seeds") == 1:
        return "one seed"
    if row.get("interval"):
        return "its interval overlaps the margin's edge"
    return "the evidence does not decide it"


def _value_phrase(row: dict) -> str:
    if row["kind"] == "statement" or row["ours"] is None or isinstance(row["ours"], str):
        return ""
    unit = " %" if row["unit"] == "%" else (" points" if row["unit"] == "percentage points" else "")
    return f"paper {paper_text(row)}{unit}, ours {ours_text(row)}{unit}"


def answer_sentences(rows: list[dict], paper: str) -> list[str]:
    """The answer in words, two to four sentences generated from the verdicts of the paper's central
    claims: the answer, then what held, what did not (paper against ours) and what is open and why."""
    spec = HEADLINES[paper]
    by_id = {r["id"]: r for r in rows}
    central = [(by_id[cid], label) for cid, label in spec.claims[:spec.central]]
    word = answer_word([r["verdict"] for r, _ in central])
    out = [f"{word[0].upper()}{word[1:]}."]
    groups = {"reproduced": [], "not_reproduced": [], "open": []}
    for row, label in central:
        key = row["verdict"] if row["verdict"] in ("reproduced", "not_reproduced") else "open"
        groups[key].append((row, label))
    if groups["reproduced"]:
        out.append("Reproduced: " + "; ".join(
            label + (f" ({v})" if (v := _value_phrase(r)) else "") for r, label in groups["reproduced"]) + ".")
    if groups["not_reproduced"]:
        out.append("Not reproduced: " + "; ".join(
            label + (f" ({v})" if (v := _value_phrase(r)) else "") for r, label in groups["not_reproduced"]) + ".")
    if groups["open"]:
        out.append("Open: " + "; ".join(
            f"{label} ({'not run' if r['verdict'] == 'not_run' else _why_open(r)})" for r, label in groups["open"])
            + ".")
    return out


RULE = ("Answer rule, from the central claims: holds if all are reproduced; holds in part if some are reproduced and "
        "some not; does not hold if none is reproduced and at least half are not; otherwise undecided.")


def _md_bold(text: str) -> str:
    return re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", escape(text))


def what_held(rows: list[dict], paper: str) -> Html:
    """The box that opens a chapter: the answer, then each headline claim's paper value, ours,
    seeds, fidelity and verdict (one line each), then the rule."""
    spec = HEADLINES[paper]
    by_id = {r["id"]: r for r in rows}
    word, sentence = answer(rows, paper)
    lines, plain = [], [f"What held ({paper}): {sentence}"]
    for k, (cid, label) in enumerate(spec.claims):
        row = by_id[cid]
        verdict = row["verdict"]
        central = " (central)" if k < spec.central else ""
        if verdict == "not_run":
            nums = f"paper {paper_text(row)} · not run: {labels.words(_reason(row))}"
        elif row["kind"] == "statement":
            nums = ours_text(row)  # shortened, whole when opened (more())
        else:
            unit = " %" if row["unit"] == "%" else (" points" if row["unit"] == "percentage points" else "")
            nums = f"paper {paper_text(row)}{unit} · ours {ours_text(row)}{unit}"
        extra = basis(row) if verdict != "not_run" else ""
        note = f" Note: {labels.words(row['note'])}" if row.get("note") else ""
        lines.append(f'<li data-claim="{escape(cid)}" data-verdict="{verdict}">{_mark(verdict)}'
                     f"<strong>{escape(label)}</strong>{escape(central)}: "
                     + (f'<span class="dpn-nums">{escape(nums)}</span>' if row["kind"] != "statement" and
                        verdict != "not_run" else more(nums, 150))
                     + (f" ({escape(extra)})" if extra else "") + f" — {escape(BADGES[verdict][0])}."
                     + escape(note) + "</li>")
        plain.append(f"- {label}{central}: {nums}" + (f" ({extra})" if extra else "") + f" {verdict}{note}")
    spread = seed_spread(rows)
    if spread:
        plain.append(spread)
    said = answer_sentences(rows, paper)
    plain.insert(0, " ".join(said))
    colour = COLOURS[word]
    html = (f'{STYLE}{HTML_STYLE}<div class="what-held dpn-held" data-paper="{paper}" data-answer="{word}">'
            f'<p class="dpn-question"><strong>{escape(spec.question)}</strong></p>'
            f'<p class="dpn-answer"><span class="dpn-mark" style="background:{colour};width:auto;padding:0 .35em">'
            f"{escape(word)}</span> {labels.together(escape(' '.join(said[1:])))}</p>"
            f"<details><summary>The {len(spec.claims)} headline claims, one by one</summary><ul>{''.join(lines)}</ul>"
            + (f'<p class="dpn-spread">{escape(spread)}</p>' if spread else "")
            + "</details>"
            + f'<p class="dpn-rule">{escape(RULE)} Values: the paper\'s from the claims registry, ours from '
            "the run records; every claim is listed at the end of the chapter.</p></div>")
    return Html(html, "\n".join(plain))


def seed_spread(rows: list[dict]) -> str | None:
    """One sentence on how far our seeds spread: over the training claims in percent judged on
    at least 3 seeds, the range and median of the standard deviation across seeds, recovered
    from each row's t interval (half-width = t(n-1) x SD / sqrt(n), :mod:`dpnotes.report.verdicts`);
    ``None`` when no claim has 3 seeds."""
    from dpnotes.report.verdicts import t_quantile

    sds = sorted((r["interval"][1] - r["interval"][0]) / 2 * math.sqrt(r["seeds"]) / t_quantile(r["seeds"])
                 for r in rows if r.get("kind") == "training" and r.get("unit") == "%" and r.get("category") == "claim"
                 and (r.get("seeds") or 0) >= 3 and r.get("interval") and not r.get("paired"))
    if not sds:
        return None
    return (f"Seed spread: over the {len(sds)} accuracy claims judged on 3 or more seeds, our standard deviation "
            f"across seeds is {sds[0]:.2f}-{sds[-1]:.2f} points (median {statistics.median(sds):.2f}), "
            "computed from the run records.")



def answers(rows: list[dict], *, link: Callable[[str], str] | None = None) -> Html:
    """The five answers (the index page and the scoreboard): one line per paper, linked by
    ``link(paper) -> href`` when given."""
    items, plain = [], []
    for paper in HEADLINES:
        word, sentence = answer(rows, paper)
        title = escape(TITLES[paper])
        name = f'<a href="{escape(link(paper))}">{title}</a>' if link else title
        colour = COLOURS[word]
        items.append(f'<li data-paper="{paper}" data-answer="{word}"><strong>{name}</strong>: '
                     f'<span class="dpn-mark" style="background:{colour};width:auto;padding:0 .35em">'
                     f"{escape(word)}</span> {_md_bold(sentence)}</li>")
        plain.append(f"{TITLES[paper]}: {word}. {sentence}")
    html = (f'{STYLE}<div class="what-held dpn-answers"><p><strong>What held, paper by paper.</strong></p>'
            f'<ul>{"".join(items)}</ul><p class="dpn-rule">{escape(RULE)}</p></div>')
    return Html(html, "\n".join(plain))


def answers_markdown(rows: list[dict]) -> str:
    """The five answers as a MyST page fragment for the index page (``book/intro.md`` includes
    it): raw HTML linking each chapter, relative to ``book/``."""
    return answers(rows, link=lambda p: f"executed/{p}.html").html + "\n"


def paper_what_held(paper: str, *, store=None) -> Html:
    """The "What held" box of ``paper``'s chapter."""
    from dpnotes.report import scoreboard

    return what_held(scoreboard(store=store, paper=paper), paper)
