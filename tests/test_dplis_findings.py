"""The DPlis chapter's findings (dpnotes.report.dplis.checks): registry arithmetic checked
against brute force, and the sum-vs-mean gradients against their definition."""

import itertools
import math

import numpy as np
import pytest

from dpnotes import claims
from dpnotes.report.dplis import checks as F


@pytest.mark.parametrize("n", [3, 4, 5, 6])
@pytest.mark.parametrize("ddof", [0, 1])
def test_sd_over_range_bounds_match_brute_force(n, ddof):
    # SD / range is extreme when every value sits at an end or at the midpoint (grid of 0, 0.5, 1)
    ratios = [np.std(v, ddof=ddof) / (max(v) - min(v)) for v in itertools.product((0.0, 0.5, 1.0), repeat=n)
              if max(v) - min(v) == 1.0]
    least, largest = F.sd_over_range_bounds(n, ddof)
    assert min(ratios) == pytest.approx(least) and max(ratios) == pytest.approx(largest)
    rng = np.random.default_rng(n + 10 * ddof)
    for _ in range(2000):
        v = rng.normal(size=n)
        assert least - 1e-12 <= np.std(v, ddof=ddof) / np.ptp(v) <= largest + 1e-12


def test_table10_fits_the_population_sd_only():
    sd = F.table10_sd_convention()
    assert len(sd["rows"]) == 12 and all(r["population fits"] for r in sd["rows"])
    only_pop = [r for r in sd["rows"] if not r["sample fits"]]
    assert only_pop and all(r["sd/range"] < sd["sample"][0] for r in only_pop)
    cell = next(r for r in sd["rows"] if r["cell"] == "mnist_mlp.eps5_01.no")
    assert cell["sd"] == claims.get("dplis.table10.mnist_mlp.eps5_01.no.std").number


def test_single_run_gains_read_table2_and_table10():
    rows = {r["cell"]: r for r in F.single_run_gains()}
    assert len(rows) == 12
    r = rows["mnist_mlp.eps1_99.r10"]
    assert r["Table 2 gain"] == claims.get("dplis.table2.mnist_mlp.eps1_99.gain_r10").number
    assert r["range read at"] == "eps5_01" and r["gain within No's range"]
    assert rows["cifar10_cnn.eps10_00.rbest"]["smoothed: 5-run range"] == \
        claims.get("dplis.table10.cifar10_cnn.eps10_00.r30.range_width").number


def test_theorem3_bound_is_vacuous_beyond_a_tiny_beta():
    t = F.theorem3_bound()
    assert t["steps"] == t["epochs"] * (t["n"] // int(claims.setting("dplis.table1.mnist.batch_size")))
    assert t["prefactor"] == pytest.approx(2 * t["eta"] * t["steps"] / t["n"])
    b = t["beta_max_for_bound_1"]
    assert t["prefactor"] * (1 + t["eta"] * b) ** (t["steps"] - 1) == pytest.approx(1.0, rel=1e-6)
    assert t["log10_growth"] == pytest.approx((t["steps"] - 1) * math.log10(1 + t["eta"]))


def test_code_facts_and_registry_reads():
    cv = F.code_vs_paper()
    assert cv["ratio"] == pytest.approx(10) and cv["code_r"] not in (cv["r_default"], cv["r_best"])
    assert F.zero_sharpness() == ["dplis.table9.cifar10_mlp.sharpness_r10"]
    rb = {r["row"]: r for r in F.r_best_choices()}
    assert rb["cifar10_cnn_tanh"]["eps7_01"] == claims.setting("dplis.table11.eps7_01.r_best")


def test_combine_effect_sum_is_k_times_the_mean_before_clipping():
    rows = F.combine_effect(radii=(10.0,), batch=32, epochs=(0,))
    (row,) = rows
    k = claims.setting("dplis.setup.k_image")
    assert row["sum: median norm"] == pytest.approx(k * row["mean: median norm"], rel=1e-5)
    assert row["sum: share clipped"] >= row["mean: share clipped"]
