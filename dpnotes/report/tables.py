"""The book's tables and figures, formatted one way: what every chapter cell calls to show a
frame or a figure.

Tables (:func:`table`): no index column (a named index becomes a column), no ``NaN`` (a dash,
whose meaning the table prints under it), no dict, list or Series reprs
(mappings print as ``key value; ...``), integers as integers, accuracy-like fractions as percent
where the caller names the columns, numbers right-aligned and never wrapped. Figures
(:func:`figure`): a PNG at :data:`DPI` dpi shown at the size it was drawn (so its fonts keep their
point size), inside a numbered, captioned ``<figure>`` with a descriptive alt text. Both are
returned as :class:`dpnotes.report.html.Html`, which Jupyter shows as HTML and prints as text.
"""

from __future__ import annotations

import base64
import io
import math
import numbers
import re
from html import escape

from dpnotes.report import labels

DPI = 200
MIN_FONT_PT = 9.0  # the smallest font a figure may use, at the size it is drawn
CSS_PX_PER_IN = 96
MAX_WIDTH_IN = 6.9  # a figure's room in a cell output at a 1280 px window (672 px measured), in inches of CSS px
DASH = "—"

STYLE = """<style>
.dpn-tablewrap{overflow-x:auto;max-width:100%;margin:.4em 0 1em 0}
table.dpn-table{border-collapse:collapse;font-size:.78em;width:auto}
table.dpn-table th,table.dpn-table td{padding:.2em .4em;border-bottom:1px solid #d0d7de;vertical-align:top;
  text-align:left;overflow-wrap:normal;word-break:normal;hyphens:manual}
p.dpn-tabletitle{font-weight:600;margin:1em 0 .2em 0}
table.dpn-table th{font-weight:600;background:#f6f8fa}
table.dpn-table td.dpn-num{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}
table.dpn-table th.dpn-num{text-align:right}
table.dpn-table .dpn-nobr{white-space:nowrap}
p.dpn-tablenote{font-size:.8em;color:#57606a;margin:-.6em 0 1em 0}
figure.dpn-figure{margin:1em 0 1.4em 0}
figure.dpn-figure img{max-width:100%;height:auto;display:block}
@media (max-width:720px){figure.dpn-figure img.dpn-phone{width:auto!important}}
figure.dpn-figure figcaption{font-size:.88em;color:#24292f;margin-top:.4em}
</style>"""


def _missing(value) -> bool:
    if value is None:
        return True
    try:
        return isinstance(value, float) and math.isnan(value) or bool(value != value)  # NaN, pd.NA, NaT
    except (TypeError, ValueError):
        return False


def number(value, decimals: int | None = None) -> str:
    """A number as the book prints it: an integer (or an integral float) without decimals,
    thousands separated from 10,000 up; a float with ``decimals`` decimals, else 4 significant
    digits (no exponent between 1e-3 and 1e6); infinity as ∞; a missing value as a dash."""
    if _missing(value):
        return DASH
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, numbers.Integral) or (isinstance(value, float) and value.is_integer() and decimals is None
                                               and abs(value) < 1e15):
        v = int(value)
        return f"{v:,}" if abs(v) >= 10_000 else str(v)
    v = float(value)
    if math.isinf(v):
        return "∞" if v > 0 else "−∞"
    if decimals is not None:
        return f"{v:.{decimals}f}"
    if v != 0 and not 1e-3 <= abs(v) < 1e6:
        return f"{v:.3g}"
    text = f"{v:.4g}"
    if "e" in text:  # .4g switches to an exponent from 1e4 up
        text = f"{v:.0f}"
    return text


def text(value, decimals: int | None = None) -> str:
    """Any cell value as plain text: numbers by :func:`number`, mappings as ``key value; ...``,
    sequences joined by commas; never a Python or pandas repr."""
    if isinstance(value, dict):
        return "; ".join(f"{k} {text(v, decimals)}" for k, v in value.items())
    if isinstance(value, (list, tuple, set)):
        return ", ".join(text(v, decimals) for v in value)
    if hasattr(value, "to_dict") and not isinstance(value, str):  # a pandas Series
        return text(value.to_dict(), decimals)
    if isinstance(value, (numbers.Number, type(None))) or _missing(value):
        return number(value, decimals)
    return str(value)


def _numeric(value) -> bool:
    return isinstance(value, numbers.Number) and not isinstance(value, bool) or _missing(value)


def table(data, *, percent=(), decimals: dict | int | None = None, rename: dict | None = None,
          dash: str | None = None, note: str | None = None, columns=None, title: str | None = None,
          provenance: str | None = None, raw=()):
    """A frame (or a list of dicts) as a clean HTML table (see the module docstring).

    ``percent``: columns holding fractions in [0, 1], shown times 100 with " (%)" added to their
    header (accuracy in % everywhere). ``decimals``: one count for every float, or a column ->
    count mapping. ``rename``: column -> header. ``dash``: what a dash means in this table,
    printed under it whenever a cell is missing ("no value" unless told more).
    ``note``: any other line printed under the table. ``columns``: their order (a list of dicts).
    ``title``: the line that names the table, above it. Headers and text cells are named by
    :mod:`dpnotes.report.labels` (one name per thing), except the ``raw`` columns (ids a reader may
    look up); ``provenance``: the table is evidence (record ids, run lists), folded under that line.
    """
    import pandas as pd

    from dpnotes.report.html import Html

    frame = pd.DataFrame(data, columns=columns) if not isinstance(data, pd.DataFrame) else data
    if isinstance(frame.columns, pd.MultiIndex):
        frame = frame.copy()
        frame.columns = [" ".join(str(c) for c in col if str(c)) for col in frame.columns]
    unnamed = all(name is None for name in frame.index.names)
    if unnamed and frame.index.dtype.kind in "iu":  # row numbers left by a filter or a sort: no column
        frame = frame.reset_index(drop=True)
    if not unnamed or not isinstance(frame.index, pd.RangeIndex):
        frame = frame.reset_index().rename(columns={"index": ""})  # an index with meaning is a column
    frame = frame.reset_index(drop=True)
    unknown = set(percent) - set(frame.columns)
    if unknown:
        raise ValueError(f"percent names columns the table does not have: {sorted(unknown)}")
    headers, cells, numeric = [], [], []
    for col in frame.columns:
        values = list(frame[col])
        digits = decimals.get(col) if isinstance(decimals, dict) else decimals
        if col in percent:
            values = [v if _missing(v) else 100 * v for v in values]
            digits = 2 if digits is None else digits
        label = (rename or {}).get(col) or labels.header(col)
        headers.append(label + (" (%)" if col in percent else ""))
        numeric.append(all(_numeric(v) for v in values))
        named = (lambda t: t) if col in raw else labels.cell
        cells.append([named(text(v, digits if isinstance(v, float) else None)) for v in values])
    num = ' class="dpn-num"'
    head = "".join(f"<th{num if n else ''}>{_paths(escape(h))}</th>" for h, n in zip(headers, numeric))
    body = "".join("<tr>" + "".join(f"<td{num if n else ''}>{_paths(escape(col[i]))}</td>"
                                    for col, n in zip(cells, numeric))
                   + "</tr>" for i in range(len(frame)))
    notes = [f"{DASH}: {dash or 'no value'}"] if any(c == DASH for col in cells for c in col) else []
    notes += [note] if note else []
    notes = [labels.words(n) for n in notes]
    foot = "".join(f'<p class="dpn-tablenote">{escape(n)}</p>' for n in notes)
    caption = f'<p class="dpn-tabletitle">{escape(title)}</p>' if title else ""
    html = (f'{caption}<div class="dpn-tablewrap"><table class="dpn-table"><thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table></div>{foot}")
    if provenance:
        html = f'<details class="dpn-prov"><summary>{escape(provenance)}</summary>{html}</details>'
    plain = "\n".join(([title] if title else []) + ["\t".join(headers)]
                      + ["\t".join(col[i] for col in cells) for i in range(len(frame))] + notes)
    html = STYLE + html
    return Html(html, plain)


def _paths(html: str) -> str:
    """A file path or a Python attribute in a cell set as code (``research/GDP_2019/adult_tutorial.py``,
    ``TrainConfig.non_private``): a name to look up, not words; a short hyphenated name kept on one line
    (``Fashion-MNIST``, ``CIFAR-10``, ``DP-SGD-HF``)."""
    html = re.sub(r"(?<=\w)-&gt;(?=\w)", " → ", html)  # ImageNet->CIFAR-100: one arrow, no break inside "->"
    html = re.sub(r"(?<![\w&;#-])([\w.()]+(?:-[\w.()]+)+)(?![\w-])",
                  lambda m: f'<span class="dpn-nobr">{m.group(1)}</span>' if len(m.group(1)) <= 20 else m.group(1),
                  html)
    html = labels.together(html)  # ε = 1 on one line
    html = re.sub(r"(?<![\w/])((?:[\w.-]+/)+[\w.-]+\.(?:py|json|toml|md|ipynb|npz|csv))", r"<code>\1</code>", html)
    return re.sub(r"(?<![\w.])([A-Z][a-z]+[A-Z]\w*\.[a-z_]+)\b", r"<code>\1</code>", html)


def _labelled(ax, axis: str) -> bool:
    """An axis is labelled when it, or an axis it shares, has a label, or when it has no tick
    labels at all (a panel of pictures) or names its ticks in words (categories)."""
    siblings = getattr(ax, f"get_shared_{axis}_axes")().get_siblings(ax)
    if any(getattr(a, f"get_{axis}label")() for a in siblings):
        return True
    ticks = [t.get_text() for t in getattr(ax, f"get_{axis}ticklabels")() if t.get_text()]
    return not getattr(ax, f"{axis}axis").get_visible() or any(re.search(r"[A-Za-z]{3}", t) for t in ticks)


def style() -> None:
    """Matplotlib defaults for the book: no font under :data:`MIN_FONT_PT` points."""
    import matplotlib as mpl

    mpl.rcParams.update({"font.size": 10, "axes.titlesize": 10, "axes.labelsize": 10, "xtick.labelsize": 9,
                         "ytick.labelsize": 9, "legend.fontsize": 9, "figure.titlesize": 11})


def figure(fig, *, number: str, caption: str, alt: str):
    """``fig`` as a numbered, captioned figure: ``number`` names it after the paper
    ("Figure 4 (paper) / ours", or "Ours" for a figure the paper has not), ``caption`` says
    what it shows, ``alt`` describes it for a reader who cannot see it.

    Readable at the column width: a figure wider than the column (:data:`MAX_WIDTH_IN`) is shown
    shrunk to it, so every font smaller than :data:`MIN_FONT_PT` points at the size shown is
    enlarged to it. No empty panel: a panel without data is removed and named in the caption.
    Legends off the data and overplotted series marked (:mod:`dpnotes.report.figure_fit`); a figure
    wider than a phone's column also comes as a phone-shaped copy (one column of panels) that a
    narrow window shows instead. Refuses a panel whose axes are not labelled in words, a legend that
    still covers a plotted point, and a missing caption or alt text. Closes ``fig``."""
    import matplotlib.pyplot as plt

    from dpnotes.report import figure_fit
    from dpnotes.report.html import Html

    try:
        if not caption.strip() or not alt.strip():
            raise ValueError(f"figure {number!r}: a caption and an alt text are required")
        caption = labels.words(caption)
        for t in _texts(fig):  # legends, ticks, titles: one name per thing
            named = labels.words(t.get_text())
            if named != t.get_text():
                t.set_text(named)
        removed = []
        for ax in list(fig.axes):
            if ax.get_visible() and ax.axison and not (ax.has_data() or ax.images or ax.collections):
                removed.append(ax.get_title() or "an empty panel")
                ax.remove()
        fig.canvas.draw()  # tick labels exist once drawn
        for ax in fig.axes:
            if not ax.get_visible() or not ax.axison:
                continue
            for axis in ("x", "y"):
                if not _labelled(ax, axis):
                    raise ValueError(f"figure {number!r}: the {axis} axis of panel "
                                     f"{ax.get_title() or 'untitled'!r} has no label")
        figure_fit.mark_identical(fig)
        figure_fit.place_legends(fig)
        width = max(fig.get_size_inches()[0], fig.get_tightbbox(fig.canvas.get_renderer()).width + 0.2)
        least = MIN_FONT_PT * max(1.0, width / MAX_WIDTH_IN) + 0.1  # at the size drawn (0.2 in: the padding)
        for t in _texts(fig):
            if t.get_fontsize() < least:
                t.set_fontsize(least)
        figure_fit.place_legends(fig)  # the fonts may have grown
        png, smallest, shown = _drawn(fig, number, round(MAX_WIDTH_IN * CSS_PX_PER_IN))
        phone = None
        if shown > figure_fit.PHONE_MAX_WIDTH_PX and figure_fit.phone_layout(fig):
            phone = _drawn(fig, f"{number} (phone)", figure_fit.PHONE_MAX_WIDTH_PX)
    finally:
        plt.close(fig)
    if removed:
        caption += f" (No panel for: {'; '.join(removed)}.)"
    source = ""
    if phone is not None:
        source = (f'<source media="(max-width:720px)" srcset="data:image/png;base64,'
                  f'{base64.b64encode(phone[0]).decode()} {DPI / CSS_PX_PER_IN:.4f}x">')
    img = (f'<img src="data:image/png;base64,{base64.b64encode(png).decode()}" alt="{escape(alt)}" '
           f'style="width:{shown}px" data-min-font-pt="{smallest:.1f}" data-shown-px="{shown}"'
           + (f' class="dpn-phone" data-phone-min-font-pt="{phone[1]:.1f}" data-phone-px="{phone[2]}"'
              if phone is not None else "") + ">")
    html = (f'{STYLE}<figure class="dpn-figure">' + (f"<picture>{source}{img}</picture>" if source else img)
            + f"<figcaption><strong>{escape(number)}.</strong> {escape(caption)}</figcaption></figure>")
    return Html(html, f"{number}. {caption}")


def _drawn(fig, number: str, room_px: int) -> tuple[bytes, float, int]:
    """``fig`` as a PNG, the smallest font at the size shown and that size (CSS px, at most ``room_px``);
    refuses a legend that covers a plotted point."""
    from dpnotes.report import figure_fit

    covered = figure_fit.legend_overlaps(fig)
    if covered:
        raise ValueError(f"figure {number!r}: {covered[0]}")
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=DPI, bbox_inches="tight")
    png = buffer.getvalue()
    drawn = round(int.from_bytes(png[16:20], "big") / DPI * CSS_PX_PER_IN)  # IHDR width: the drawn size
    shown = min(drawn, room_px)
    smallest = min((t.get_fontsize() for t in _texts(fig)), default=MIN_FONT_PT) * shown / drawn
    return png, smallest, shown


def _texts(fig):
    return [t for t in fig.findobj(lambda a: hasattr(a, "get_fontsize") and hasattr(a, "get_text"))
            if t.get_visible() and t.get_text()]
