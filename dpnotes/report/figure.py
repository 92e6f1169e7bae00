"""The scoreboard page's figure: verdict counts per paper as stacked bars, coloured as the badges."""

from __future__ import annotations

from dpnotes.report import VERDICTS
from dpnotes.report.html import BADGES


def verdict_bars(ax, counts: dict[str, dict[str, int]]) -> None:
    """Per paper, a stacked horizontal bar of its verdict counts (``counts`` as from
    :func:`summary`), coloured as the book's badges."""
    papers = list(counts)[::-1]
    left = [0] * len(papers)
    room = 0.04 * max(sum(c.values()) for c in counts.values())  # narrower segments go unlabelled
    for verdict in VERDICTS:
        label, _, colour = BADGES[verdict]
        widths = [counts[p][verdict] for p in papers]
        bars = ax.barh(papers, widths, left=left, color=colour, label=label)
        ax.bar_label(bars, labels=[str(w) if w >= room else "" for w in widths], label_type="center",
                     color="white", fontsize=9)
        left = [a + w for a, w in zip(left, widths)]
    ax.set_xlabel("claims")
    ax.legend(ncols=len(VERDICTS), loc="lower center", bbox_to_anchor=(0.5, 1.0), frameon=False)
    ax.spines[["top", "right"]].set_visible(False)
