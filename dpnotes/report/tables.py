"""The book's tables and figures, formatted one way: what every chapter cell calls to show a
frame or a figure.

Tables (:func:`table`): no index column (a named index becomes a column), no ``NaN`` (a dash,
whose meaning the caller states and the table prints under it), no dict, list or Series reprs
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

DPI = 200
MIN_FONT_PT = 9.0  # the smallest font a figure may use, at the size it is drawn
CSS_PX_PER_IN = 96
MAX_WIDTH_IN = 7.6  # the content column at a 1280 px window, in inches of CSS pixels
DASH = "—"

STYLE = """<style>
.dpn-tablewrap{overflow-x:auto;max-width:100%;margin:.4em 0 1em 0}
table.dpn-table{border-collapse:collapse;font-size:.82em;width:auto;max-width:100%}
table.dpn-table th,table.dpn-table td{padding:.2em .5em;border-bottom:1px solid #d0d7de;vertical-align:top;
  text-align:left}
table.dpn-table th{font-weight:600;background:#f6f8fa}
table.dpn-table td.dpn-num,table.dpn-table th.dpn-num{text-align:right;white-space:nowrap;
  font-variant-numeric:tabular-nums}
p.dpn-tablenote{font-size:.8em;color:#57606a;margin:-.6em 0 1em 0}
figure.dpn-figure{margin:1em 0 1.4em 0}
figure.dpn-figure img{max-width:100%;height:auto;display:block}
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
          dash: str | None = None, note: str | None = None, columns=None):
    """A frame (or a list of dicts) as a clean HTML table (see the module docstring).

    ``percent``: columns holding fractions in [0, 1], shown times 100 with " (%)" added to their
    header (accuracy in % everywhere). ``decimals``: one count for every float, or a column ->
    count mapping. ``rename``: column -> header. ``dash``: what a dash means in this table,
    printed under it (required when a cell is missing: a dash never goes unexplained).
    ``note``: any other line printed under the table. ``columns``: their order (a list of dicts).
    """
    import pandas as pd

    from dpnotes.report.html import Html

    frame = pd.DataFrame(data, columns=columns) if not isinstance(data, pd.DataFrame) else data
    if isinstance(frame.columns, pd.MultiIndex):
        frame = frame.copy()
        frame.columns = [" ".join(str(c) for c in col if str(c)) for col in frame.columns]
    if any(name is not None for name in frame.index.names):
        frame = frame.reset_index()
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
        label = (rename or {}).get(col, str(col)) + (" (%)" if col in percent else "")
        headers.append(label)
        numeric.append(all(_numeric(v) for v in values))
        cells.append([text(v, digits if isinstance(v, float) else None) for v in values])
    if any(c == DASH for col in cells for c in col) and not dash:
        raise ValueError("the table has missing cells: say what its dash means (dash=...)")
    num = ' class="dpn-num"'
    head = "".join(f"<th{num if n else ''}>{escape(h)}</th>" for h, n in zip(headers, numeric))
    body = "".join("<tr>" + "".join(f"<td{num if n else ''}>{escape(col[i])}</td>" for col, n in zip(cells, numeric))
                   + "</tr>" for i in range(len(frame)))
    notes = [f"{DASH}: {dash}"] if dash and any(c == DASH for col in cells for c in col) else []
    notes += [note] if note else []
    foot = "".join(f'<p class="dpn-tablenote">{escape(n)}</p>' for n in notes)
    html = (f'{STYLE}<div class="dpn-tablewrap"><table class="dpn-table"><thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table></div>{foot}")
    plain = "\n".join(["\t".join(headers)] + ["\t".join(col[i] for col in cells) for i in range(len(frame))]
                      + notes)
    return Html(html, plain)


def smallest_font(fig) -> float:
    """The smallest font size (points) of any visible text of ``fig``, tick labels included."""
    sizes = [t.get_fontsize() for t in fig.findobj(lambda a: hasattr(a, "get_fontsize") and hasattr(a, "get_text"))
             if t.get_visible() and t.get_text()]
    return min(sizes) if sizes else MIN_FONT_PT


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
    what it shows, ``alt`` describes it for a reader who cannot see it. Refuses a figure
    wider than the content column, a font under :data:`MIN_FONT_PT` points, an axis without a
    label in words, or an empty panel; closes ``fig``."""
    import matplotlib.pyplot as plt

    from dpnotes.report.html import Html

    try:
        width, _ = fig.get_size_inches()
        fig.canvas.draw()  # tick labels exist once drawn
        if width > MAX_WIDTH_IN + 1e-9:
            raise ValueError(f"figure {number!r}: {width:.1f} in wide, at most {MAX_WIDTH_IN} in (the column)")
        if not caption.strip() or not alt.strip():
            raise ValueError(f"figure {number!r}: a caption and an alt text are required")
        for ax in fig.axes:
            if not ax.get_visible() or not ax.axison:
                continue
            if not (ax.has_data() or ax.images or ax.collections):
                raise ValueError(f"figure {number!r}: an empty panel ({ax.get_title() or 'untitled'})")
            for axis in ("x", "y"):
                if not _labelled(ax, axis):
                    raise ValueError(f"figure {number!r}: the {axis} axis of panel "
                                     f"{ax.get_title() or 'untitled'!r} has no label")
        smallest = smallest_font(fig)
        if smallest < MIN_FONT_PT:
            raise ValueError(f"figure {number!r}: a font of {smallest:g} pt, at least {MIN_FONT_PT:g} pt")
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=DPI, bbox_inches="tight")
    finally:
        plt.close(fig)
    png = buffer.getvalue()
    data = base64.b64encode(png).decode()
    shown = round(int.from_bytes(png[16:20], "big") / DPI * CSS_PX_PER_IN)  # IHDR width: the drawn size
    html = (f'{STYLE}<figure class="dpn-figure"><img src="data:image/png;base64,{data}" alt="{escape(alt)}" '
            f'style="width:{shown}px" data-drawn-px="{shown}" data-min-font-pt="{smallest:g}">'
            f"<figcaption><strong>{escape(number)}.</strong> {escape(caption)}</figcaption></figure>")
    return Html(html, f"{number}. {caption}")
