"""What :func:`dpnotes.report.tables.figure` does to a figure before it is shown: legends off the data,
overplotted series marked, and a phone-shaped copy.

- :func:`legend_overlaps`: every legend that covers a plotted point (a line's vertices and the segments
  between them, a scatter's markers, a bar), in display coordinates.
- :func:`place_legends`: a legend that covers data moves to the first corner or side of its axes that is
  free of data, else under its axes (the layout is redone to make room).
- :func:`mark_identical`: a series drawn exactly over an earlier one of the same axes is labelled
  "(identical to <the earlier>)" and drawn dashed or hollow, so that both stay visible.
- :func:`phone_layout`: the same figure with its panels in one column, :data:`PHONE_WIDTH_IN` wide, every
  legend under its panel, drawn at the size a phone shows it (fonts keep their point size).
"""

from __future__ import annotations

import textwrap

import numpy as np

PHONE_WIDTH_IN = 3.4  # a phone's content column at a 390 px window (342 px measured), in inches of CSS px
PHONE_MAX_WIDTH_PX = 340  # the phone copy is shown at most this wide (CSS px)
PHONE_LABEL_CHARS = 38  # a legend label longer than this wraps in the phone copy
_SAMPLE_PX = 2.0  # a line is checked every this many display pixels between its vertices
_INSIDE = ("upper right", "upper left", "lower right", "lower left", "center right", "center left",
           "upper center", "lower center")


def _renderer(fig):
    fig.canvas.draw()
    return fig.canvas.get_renderer()


def _line_points(line) -> np.ndarray:
    xy = line.get_transform().transform(np.asarray(line.get_xydata(), float))
    xy = xy[np.isfinite(xy).all(axis=1)]
    if len(xy) < 2 or line.get_linestyle() in ("None", "", " ", "none"):
        return xy
    pieces = [xy[:1]]
    for a, b in zip(xy[:-1], xy[1:]):
        n = int(np.hypot(*(b - a)) // _SAMPLE_PX) + 1
        pieces.append(a + (b - a) * np.linspace(0, 1, n + 1)[1:, None])
    return np.concatenate(pieces)


def _data(ax):
    """The display points and boxes of everything plotted in ``ax`` (clipped to its area)."""
    from matplotlib.collections import Collection
    from matplotlib.patches import Rectangle
    from matplotlib.transforms import Bbox

    box = ax.get_window_extent()
    points, boxes = [], []
    for line in ax.get_lines():
        if line.get_visible():
            points.append(_line_points(line))
    for coll in ax.collections:
        if isinstance(coll, Collection) and coll.get_visible() and len(coll.get_offsets()):
            points.append(coll.get_offset_transform().transform(np.asarray(coll.get_offsets(), float)))
    for patch in ax.patches:
        if isinstance(patch, Rectangle) and patch.get_visible() and patch.get_width() and patch.get_height():
            shown = Bbox.intersection(patch.get_window_extent(), box)  # a bar's part inside the axes (log scales)
            if shown is not None and shown.width > 0 and shown.height > 0:
                boxes.append(shown)
    xy = np.concatenate(points) if points else np.empty((0, 2))
    inside = ((xy[:, 0] >= box.x0) & (xy[:, 0] <= box.x1) & (xy[:, 1] >= box.y0) & (xy[:, 1] <= box.y1))
    return xy[inside], boxes


def _covers(extent, xy, boxes) -> int:
    """How many points or boxes the legend's ``extent`` covers."""
    n = int(((xy[:, 0] > extent.x0) & (xy[:, 0] < extent.x1) & (xy[:, 1] > extent.y0) & (xy[:, 1] < extent.y1)).sum())
    return n + sum(1 for b in boxes if b.overlaps(extent))


def _legends(fig):
    found = [ax.get_legend() for ax in fig.axes] + list(fig.legends)
    return [lg for lg in found if lg is not None and lg.get_visible()]


def legend_overlaps(fig) -> list[str]:
    """Every legend of ``fig`` that covers a plotted point of any of its panels, described."""
    renderer = _renderer(fig)
    data = [(ax, *_data(ax)) for ax in fig.axes if ax.get_visible()]
    found = []
    for legend in _legends(fig):
        extent = legend.get_window_extent(renderer)
        for ax, xy, boxes in data:
            n = _covers(extent, xy, boxes)
            if n:
                owner = legend.axes.get_title() if legend.axes else "the figure"
                found.append(f"the legend of {owner or 'an untitled panel'!r} covers {n} plotted point(s) of "
                             f"{ax.get_title() or 'an untitled panel'!r}")
    return found


def _free(fig, legend, renderer) -> bool:
    extent = legend.get_window_extent(renderer)
    return not any(_covers(extent, *_data(ax)) for ax in fig.axes if ax.get_visible())


def _below(ax, legend, renderer) -> None:
    """``legend`` under its axes, below the axis label."""
    legend.set_loc("upper center")
    bottom = ax.xaxis.get_tightbbox(renderer) or ax.get_window_extent()
    y = ax.transAxes.inverted().transform((0, bottom.y0))[1]
    legend.set_bbox_to_anchor((0.5, y - 0.02), transform=ax.transAxes)


def place_legends(fig, *, inside: bool = True) -> None:
    """Each axes legend of ``fig`` that covers data moves to a free corner or side of its axes (if
    ``inside``), else under its axes; the layout is redone when one moved under."""
    renderer = _renderer(fig)
    moved = []
    for ax in fig.axes:
        legend = ax.get_legend()
        if legend is None or not legend.get_visible() or (inside and _free(fig, legend, renderer)):
            continue
        for loc in _INSIDE if inside else ():
            legend.set_loc(loc)
            legend.set_bbox_to_anchor(None)
            if _free(fig, legend, renderer):
                break
        else:
            moved.append(ax)
    for ax in moved:  # a legend under a panel is no wider than the panel
        _wrap(ax, ax.get_legend(), renderer)
    for last in (False, False, True) if moved else ():  # place, make room, place again at the new size
        for ax in moved:
            _below(ax, ax.get_legend(), renderer)
        if not last and (len(fig.axes) > 1 or fig.get_layout_engine() is not None):
            _tight(fig)
        renderer = _renderer(fig)


def _wrap(ax, legend, renderer) -> None:
    texts = legend.get_texts()
    if not texts:
        return
    size_px = texts[0].get_fontsize() * fig_dpi(ax) / 72
    chars = max(12, int(ax.get_window_extent(renderer).width / (0.55 * size_px)) - 4)
    for t in texts:
        t.set_text(textwrap.fill(t.get_text(), chars))


def fig_dpi(ax) -> float:
    return ax.figure.dpi


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and a.size > 0 and np.allclose(a, b, rtol=0, atol=0.5)


def mark_identical(fig) -> list[str]:
    """Series drawn exactly over an earlier series of the same axes: relabelled "(identical to ...)"
    and drawn dashed (lines) or hollow (markers); returns what was marked."""
    from matplotlib.collections import PathCollection

    _renderer(fig)
    marked = []
    for ax in fig.axes:
        series = [(a, a.get_transform().transform(np.asarray(a.get_xydata(), float))) for a in ax.get_lines()]
        series += [(c, c.get_offset_transform().transform(np.asarray(c.get_offsets(), float)))
                   for c in ax.collections if isinstance(c, PathCollection)]
        named = [(a, xy) for a, xy in series if a.get_label() and not a.get_label().startswith("_")]
        for j, (artist, xy) in enumerate(named):
            first = next((a for a, other in named[:j] if _same(xy, other)), None)
            if first is None or "identical to" in first.get_label():
                continue
            label = f"{artist.get_label()} (identical to {first.get_label()})"
            marked.append(label)
            artist.set_label(label)
            if isinstance(artist, PathCollection):
                colour = artist.get_facecolor()
                artist.set_facecolor("none")
                artist.set_edgecolor(colour if len(colour) else "k")
                artist.set_sizes(np.asarray(artist.get_sizes()) * 2.5)
                artist.set_linewidth(1.5)
            else:
                artist.set_linestyle((0, (4, 4)))
                if artist.get_marker() not in ("None", None, ""):
                    artist.set_markerfacecolor("none")
        legend = ax.get_legend()
        if legend is not None and marked:
            _relabel(ax, legend)
    return marked


def _relabel(ax, legend) -> None:
    """Rebuild ``legend`` from its axes' current labels, keeping where it was and how it looked."""
    kw = {"loc": legend._loc, "ncols": legend._ncols, "fontsize": legend.get_texts()[0].get_fontsize()
          if legend.get_texts() else None, "frameon": legend.get_frame_on(),
          "title": legend.get_title().get_text() or None}
    anchor = legend.get_bbox_to_anchor()
    handles, labels = ax.get_legend_handles_labels()
    new = ax.legend(handles, labels, **{k: v for k, v in kw.items() if v is not None})
    if anchor is not None and legend._bbox_to_anchor is not None:
        new.set_bbox_to_anchor(anchor)


def phone_layout(fig) -> bool:
    """Re-lay ``fig`` for a phone: its panels in one column of :data:`PHONE_WIDTH_IN` inches, each
    panel's legend (labels wrapped) under the panel. False if it has no panel to move (left as is)."""
    from matplotlib.gridspec import GridSpec, SubplotSpec

    axes = [ax for ax in fig.axes if ax.get_visible() and ax.axison and isinstance(ax.get_subplotspec(), SubplotSpec)]
    if not axes or len(axes) != len([a for a in fig.axes if a.get_visible()]):
        return False
    axes.sort(key=lambda ax: (-round(ax.get_position().y1, 2), ax.get_position().x0))
    width, height = fig.get_size_inches()
    heights = []
    for ax in axes:
        pos = ax.get_position()
        ratio = (pos.height * height) / max(pos.width * width, 1e-6)
        heights.append(float(np.clip(ratio * (PHONE_WIDTH_IN - 0.9), 1.6, 3.4)))
    legends = [ax.get_legend() for ax in axes]
    extra = [0.9 + (0.22 * len(lg.get_texts()) if lg is not None else 0) for lg in legends]
    grid = GridSpec(len(axes), 1, figure=fig, height_ratios=[h + e for h, e in zip(heights, extra)])
    for ax, spec in zip(axes, grid):
        ax.set_subplotspec(spec)
    fig.set_size_inches(PHONE_WIDTH_IN, sum(heights) + sum(extra) + 0.3)
    for ax, legend in zip(axes, legends):
        if legend is None:
            continue
        handles, labels = ax.get_legend_handles_labels()
        size = legend.get_texts()[0].get_fontsize() if legend.get_texts() else None
        ax.legend(handles, [textwrap.fill(label, PHONE_LABEL_CHARS) for label in labels], fontsize=size, ncols=1)
    for ax in axes:  # a title no wider than the panel
        ax.set_title(textwrap.fill(ax.get_title(), PHONE_LABEL_CHARS))
    for legend in list(fig.legends):  # a figure's legend: one column, over the panels
        texts = legend.get_texts()
        handles, labels = legend.legend_handles, [t.get_text() for t in texts]
        size = texts[0].get_fontsize() if texts else None
        frame = legend.get_frame_on()
        legend.remove()
        fig.legend(handles, labels, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncols=1, frameon=frame,
                   fontsize=size)
    _tight(fig)
    place_legends(fig, inside=False)
    for _ in range(3):  # what sticks out (a long tick label, a legend) narrows the panels, not the fonts
        over = fig.get_tightbbox(_renderer(fig)).width + 0.2 - PHONE_MAX_WIDTH_PX / 96  # 0.2 in: the padding
        if over <= 0 or fig.get_size_inches()[0] - over < 0.7 * PHONE_WIDTH_IN:
            break
        fig.set_size_inches(fig.get_size_inches()[0] - over - 0.03, fig.get_size_inches()[1])
        _tight(fig)
        place_legends(fig, inside=False)
    return True


def _tight(fig) -> None:
    """``fig.tight_layout()`` without its "not compatible" warning (printed into the page otherwise):
    where it cannot fit every axes it leaves them as they are, which the legend placement then handles."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        fig.tight_layout()
