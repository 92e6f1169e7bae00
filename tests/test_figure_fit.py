"""Figures as the book shows them (:mod:`dpnotes.report.figure_fit` through :func:`tables.figure`): no legend
over a plotted point, overplotted series marked, and a phone-shaped copy readable at 390 px."""

from __future__ import annotations

import re

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from dpnotes.report import figure_fit, tables  # noqa: E402


def _crowded(ax):
    """Points over the whole panel, so that no corner is free."""
    x, y = np.meshgrid(np.linspace(0, 1, 15), np.linspace(0, 1, 15))
    ax.plot(x.ravel(), y.ravel(), "o", ms=2, label="a grid of points")
    ax.set(xlabel="x", ylabel="y")


def test_the_check_sees_a_legend_over_a_point():
    fig, ax = plt.subplots(figsize=(5, 4))
    _crowded(ax)
    ax.legend(loc="center")
    assert figure_fit.legend_overlaps(fig) and "covers" in figure_fit.legend_overlaps(fig)[0]
    ax.get_legend().set_bbox_to_anchor((0.5, -0.3), transform=ax.transAxes)  # moved under the panel
    assert figure_fit.legend_overlaps(fig) == []
    plt.close(fig)


def test_a_line_under_a_legend_counts_between_its_vertices():
    fig, ax = plt.subplots(figsize=(5, 4))
    ax.plot([0, 1], [0.5, 0.5], label="two vertices, a segment through the middle")
    ax.set(xlim=(0, 1), ylim=(0, 1))
    ax.legend(loc="center")
    assert figure_fit.legend_overlaps(fig)
    plt.close(fig)


def test_a_legend_over_data_moves_off_it():
    fig, ax = plt.subplots(figsize=(5, 4))
    ax.plot([0, 1], [1, 0.2], label="falling")  # the lower left corner is free
    ax.plot([0, 1], [0.9, 0.9], label="flat")
    ax.set(xlim=(0, 1), ylim=(0, 1), xlabel="x", ylabel="y")
    ax.legend(loc="upper right")
    assert figure_fit.legend_overlaps(fig)
    figure_fit.place_legends(fig)
    assert figure_fit.legend_overlaps(fig) == []
    fig, ax = plt.subplots(figsize=(5, 4))
    _crowded(ax)
    ax.legend(loc="center")
    figure_fit.place_legends(fig)  # no free corner: under the panel
    assert figure_fit.legend_overlaps(fig) == []
    assert ax.get_legend().get_window_extent().y1 <= ax.get_window_extent().y0
    plt.close("all")


def test_the_book_refuses_a_figure_whose_legend_covers_a_point():
    fig, ax = plt.subplots(figsize=(5, 4))
    _crowded(ax)
    fig.legend(*ax.get_legend_handles_labels(), loc="center")  # a figure legend: nowhere to move it
    with pytest.raises(ValueError, match="covers .* plotted point"):
        tables.figure(fig, number="Ours", caption="c", alt="a grid of points under a legend")


def test_a_series_drawn_over_another_is_marked():
    fig, ax = plt.subplots(figsize=(5, 4))
    ax.plot([0, 1, 2], [0, 1, 4], label="DP-SGD")
    ax.plot([0, 1, 2], [0, 1, 4], label="DPlis")
    ax.scatter([0, 1], [2, 3], label="a")
    ax.scatter([0, 1], [2, 3], label="b")
    ax.plot([0, 1, 2], [1, 2, 3], label="another")
    ax.legend()
    assert figure_fit.mark_identical(fig) == ["DPlis (identical to DP-SGD)", "b (identical to a)"]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "DPlis (identical to DP-SGD)" in labels and "another" in labels
    assert ax.get_lines()[1].get_linestyle() != "-"  # dashed over the first: both visible
    plt.close(fig)


def test_a_wide_figure_comes_with_a_phone_copy_readable_at_390_px():
    fig, axes = plt.subplots(1, 3, figsize=(7.5, 3))
    for ax in axes:
        ax.plot([0, 1, 2], [0, 1, 4], label="a curve with a rather long label")
        ax.set(xlabel="epochs", ylabel="accuracy")
        ax.legend()
    html = tables.figure(fig, number="Ours", caption="c", alt="three line plots").html
    assert "<picture><source media=" in html
    phone_font = float(re.search(r'data-phone-min-font-pt="([\d.]+)"', html).group(1))
    phone_px = int(re.search(r'data-phone-px="(\d+)"', html).group(1))
    assert phone_font >= 8 and phone_px <= figure_fit.PHONE_MAX_WIDTH_PX
    fig, ax = plt.subplots(figsize=(3.2, 3))  # already phone-sized: one image
    ax.plot([0, 1], [0, 1])
    ax.set(xlabel="x", ylabel="y")
    assert "<picture>" not in tables.figure(fig, number="Ours", caption="c", alt="a line").html
