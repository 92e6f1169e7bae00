"""The claims registry (``dpnotes/claims/<paper>.toml``) and the experiments-module contract.

The registry is typed in by hand from the papers, so besides its format these tests check
what the papers' own tables make checkable: printed differences equal the differences of
the printed cells, and numbers that two papers share agree.
"""

from __future__ import annotations

import math
import tomllib
from importlib import resources

import pytest

from dpnotes import claims, experiments, jsonio
from dpnotes.experiments.measurement import Measurement
from dpnotes.results import PROFILES

EXTRACTED = ("dplis", "dpis", "sadpsgd", "labeldp")  # registries whose lost values are marked in notes


def _toml(paper: str) -> dict:
    return tomllib.loads((resources.files("dpnotes.claims") / f"{paper}.toml").read_text("utf-8"))


def _module(paper: str):
    try:
        return experiments.module(paper)
    except ModuleNotFoundError as err:
        if err.name == f"dpnotes.experiments.{paper}":
            pytest.skip(f"dpnotes/experiments/{paper}.py is not written yet")
        raise


def _by_id(paper: str) -> dict[str, claims.Claim]:
    return {c.id: c for c in claims.load(paper)}


# ---------------------------------------------------------------- registry format

@pytest.mark.parametrize("paper", claims.PAPERS)
def test_claims_load_with_unique_prefixed_ids(paper):
    loaded = claims.load(paper)
    ids = [c.id for c in loaded]
    assert ids, f"{paper}.toml registers no claim"
    assert len(ids) == len(set(ids))
    assert all(i.startswith(paper + ".") for i in ids)
    assert len(loaded) == len(_toml(paper)["claim"])
    assert all(c.kind in claims.KINDS and c.source.strip() for c in loaded)


@pytest.mark.parametrize("paper", claims.PAPERS)
def test_values_are_printed_strings_and_numeric_kinds_parse(paper):
    for c in claims.load(paper):
        if c.value is None:
            continue
        assert isinstance(c.value, str) and c.value == c.value.strip(), c.id
        if c.kind in ("exact", "training"):
            assert c.number is not None and math.isfinite(c.number), c.id
            assert claims.value(c.id) == float(c.value)
            assert c.decimals == (len(c.value.split(".")[1]) if "." in c.value else 0)


@pytest.mark.parametrize("paper", claims.PAPERS)
def test_training_claims_have_positive_tolerances(paper):
    training = [c for c in claims.load(paper) if c.kind == "training" and c.value is not None]
    assert all(c.tolerance is not None and c.tolerance > 0 for c in training)


@pytest.mark.parametrize("paper", EXTRACTED)
def test_claims_without_value_say_the_text_lost_it(paper):
    for c in claims.load(paper):
        if c.kind != "statement" and c.value is None:
            assert "missing from the extracted text" in (c.note or ""), c.id
        if c.kind == "statement":
            assert c.note, f"{c.id}: a statement needs its sentence in note"


@pytest.mark.parametrize("paper", claims.PAPERS)
def test_settings_parse_as_finite_numbers(paper):
    entries = _toml(paper).get("setting", [])
    ids = [e["id"] for e in entries]
    assert len(ids) == len(set(ids))
    for entry in entries:
        assert entry["id"].startswith(paper + ".") and entry["source"].strip()
        value = claims.setting(entry["id"])
        assert math.isfinite(value) and value == float(entry["value"])


def test_lookups_fail_loudly():
    with pytest.raises(KeyError, match="dplis.table2.no_such_claim"):
        claims.get("dplis.table2.no_such_claim")
    with pytest.raises(KeyError, match="sadpsgd.no_such_setting"):
        claims.setting("sadpsgd.no_such_setting")
    with pytest.raises(ValueError, match="paper must be one of"):
        claims.load("not_a_paper")
    with pytest.raises(ValueError, match="no numeric value"):
        claims.value("labeldp.table1.col1.epsilon")  # the extraction lost this header


def test_known_entries_read_back():
    assert claims.value("dplis.table2.mnist_cnn.eps10_00.acc_rbest") == 98.90
    assert claims.get("dplis.table2.mnist_cnn.eps10_00.acc_rbest").decimals == 2
    assert claims.setting("dplis.table1.reddit.lr_over_batch") == 1e-3
    assert claims.value("dpis.table3.imdb.eps4.dpis") == 70.2
    assert claims.setting("sadpsgd.table2.cifar10.mu0") == 5


# ---------------------------------------------------------------- the papers' own arithmetic

@pytest.mark.parametrize("table", ["table2", "table3", "table11", "table12"])
def test_dplis_printed_gains_equal_cell_differences(table):
    cs = _by_id("dplis")
    gains = [c for i, c in cs.items() if i.startswith(f"dplis.{table}.") and ".gain_" in i]
    assert gains
    for g in gains:
        base, method = g.id.rsplit(".gain_", 1)
        diff = cs[f"{base}.acc_{method}"].number - cs[f"{base}.acc_no"].number
        assert diff == pytest.approx(g.number, abs=0.005), g.id


def test_dplis_perplexity_changes_and_stability_ranges_are_consistent():
    cs = _by_id("dplis")
    changes = [c for i, c in cs.items() if ".ppl_change_" in i]
    assert len(changes) == 12
    for c in changes:
        base, method = c.id.rsplit(".ppl_change_", 1)
        diff = cs[f"{base}.ppl_{method}"].number - cs[f"{base}.ppl_no"].number
        assert diff == pytest.approx(c.number, abs=0.005), c.id
    widths = [c for i, c in cs.items() if i.endswith(".range_width")]
    assert len(widths) == 12
    for w in widths:
        base = w.id.rsplit(".", 1)[0]
        assert cs[base + ".range_max"].number - cs[base + ".range_min"].number == pytest.approx(w.number, abs=0.005)


def test_dplis_text_ranges_match_table_gains():
    cs = _by_id("dplis")
    for text_id, table, method in (("sec5_2.nontransfer_gain_rbest", "table2", "rbest"),
                                   ("sec5_2.nontransfer_gain_r10", "table2", "r10"),
                                   ("sec5_2.transfer_gain_rbest", "table3", "rbest"),
                                   ("sec5_2.transfer_gain_r10", "table3", "r10"),
                                   ("sec5_6.tanh_gain_rbest", "table11", "rbest"),
                                   ("sec5_6.tanh_gain_r10", "table11", "r10"),
                                   ("sec5_7.pate_gain", "table12", "yes")):
        gains = [c.number for i, c in cs.items() if i.startswith(f"dplis.{table}.") and i.endswith(f".gain_{method}")]
        assert min(gains) == cs[f"dplis.{text_id}.min"].number
        assert max(gains) == cs[f"dplis.{text_id}.max"].number


def test_dpis_table3_equals_table4_without_adaptive_clipping_on_images():
    cs = _by_id("dpis")
    for ds in ("mnist", "fmnist", "cifar10"):  # Table 2: no adaptive clipping on the image sets
        for eps in ("0_5", "1", "2", "3"):
            assert cs[f"dpis.table3.{ds}.eps{eps}.dpis"].value == cs[f"dpis.table4.{ds}.eps{eps}.dpis_no_ac"].value


def test_labeldp_quotes_gdp_table1_numbers():
    assert claims.value("labeldp.table4.mnist.bu.value1") == claims.value("gdp.table1.row2.accuracy")
    assert claims.value("labeldp.table4.mnist.bu.value2") == claims.value("gdp.table1.row3.accuracy")
    assert claims.setting("labeldp.table4.mnist.bu.value1.budget") == claims.value("gdp.table1.row2.eps_clt")
    assert claims.setting("labeldp.table4.mnist.bu.value2.budget") == claims.value("gdp.table1.row3.eps_clt")


def test_sadpsgd_table3_rows_have_sa_dpsgd_cheapest():
    cs = _by_id("sadpsgd")
    rows = {i.rsplit(".", 1)[0] for i in cs if i.startswith("sadpsgd.table3.")}
    assert len(rows) == 9
    for row in rows:
        ours = cs[row + ".eps_s"].number
        others = [cs[f"{row}.{m}"].number for m in ("eps_d", "eps_h", "eps_a") if cs[f"{row}.{m}"].number is not None]
        assert others and all(ours < o for o in others), row


# ---------------------------------------------------------------- experiments modules

@pytest.mark.parametrize("paper", claims.PAPERS)
def test_experiments_module_contract(paper):
    module = _module(paper)
    assert isinstance(module.TITLE, str) and module.TITLE.strip()
    for profile in PROFILES:
        configs = module.configs(profile)
        assert isinstance(configs, list)
        for config in configs:
            assert {"paper", "profile", "experiment", "seed"} <= set(config)
            assert (config["paper"], config["profile"]) == (paper, profile)
            jsonio.dumps(config)  # JSON; eps = inf allowed, NaN never
    with pytest.raises(ValueError, match="profile"):
        module.configs("huge")
    registered = {c.id for c in claims.load(paper)}
    assert set(getattr(module, "NOT_RUN", {})) <= registered
    assert all(isinstance(r, str) and r for r in getattr(module, "NOT_RUN", {}).values())
    measured = module.measure([])  # values, never verdicts (those are report.verdicts')
    assert all(isinstance(m, Measurement) for m in measured)
    assert {m.claim_id for m in measured} <= registered


@pytest.mark.parametrize("claim_id, dataset", [
    ("dplis.table3.imagenet_cifar100.eps0_86.acc_rbest", "CIFAR-100"),
    ("dplis.table5.lstm.eps0_65.ppl_no", "Reddit"),
    ("dplis.table12.sigma2_40.eps7_44.acc_yes", "SVHN"),
    ("dpis.table3.imdb.eps1.dpis", "GloVe"),
    ("labeldp.table2.lp_1st.col1", "CIFAR-100"),
    ("labeldp.table5.lp_1st.eps1", "KMNIST"),
    ("labeldp.table3.lp_2st.col1", "MovieLens 1M"),
])
def test_claims_on_offline_missing_data_say_so(claim_id, dataset):
    reason = _module(claim_id.split(".")[0]).NOT_RUN[claim_id]
    assert reason.startswith("data not available offline:") and dataset in reason


@pytest.mark.parametrize("claim_id", ["dplis.table2.mnist_cnn.eps1_99.acc_no", "dpis.table3.mnist.eps1.dpis",
                                      "sadpsgd.table1.cifar10.sa_dpsgd"])
def test_claims_on_offline_data_are_not_excused(claim_id):
    reason = _module(claim_id.split(".")[0]).NOT_RUN.get(claim_id, "")
    assert not reason.startswith("data not available offline")
