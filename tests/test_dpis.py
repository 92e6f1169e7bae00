"""DPIS (Wei et al., CCS 2022) experiments module: accounting claims, Fig. 1's implied batch size,
configs, a smoke run end to end, and the measurements' ids."""

import json
import math

import pytest
import torch

from dpnotes import claims
from dpnotes.accounting.calibrate import noise_multiplier
from dpnotes.accounting.registry import price
from dpnotes.experiments import dpis, resolve
from dpnotes.experiments.dpis.answers import FLAT
from dpnotes.methods import dpsgd_decay
from dpnotes.report import paper_table
from dpnotes.results import PROFILES, Store

SIGMA = claims.get("dpis.sec3_3.fig1c.dpsgd_sigma")


def _fig1c():
    return (claims.setting("dpis.data.fmnist.n_train"), claims.setting("dpis.setup.epsilon5"),
            claims.setting("dpis.fig1.delta"))


def test_figure1c_sigma_implies_b_256_not_tramer_boneh_2048():
    n, eps, delta = _fig1c()
    at_256 = dpis.dpsgd_epsilon(SIGMA.number, 256, n, dpis.FIG1C_EPOCHS, delta)
    at_2048 = dpis.dpsgd_epsilon(SIGMA.number, dpis.TRAMER_BONEH["fashion-mnist"]["batch_size"], n,
                                 dpis.FIG1C_EPOCHS, delta)
    assert at_256 <= eps < at_2048
    assert at_2048 > 3 * eps  # far outside the budget, not a rounding matter
    assert dpis.implied_batch_sizes() == [256]


def test_figure1_batch_rows_are_monotone_and_calibrated():
    n, eps, delta = _fig1c()
    rows = dpis.figure1_batch_sizes()
    sigmas = [r["sigma_for_eps"] for r in rows]
    assert sigmas == sorted(sigmas)  # at fixed epochs, a larger batch needs more noise
    for r in rows:
        assert dpis.dpsgd_epsilon(r["sigma_for_eps"], r["batch_size"], n, dpis.FIG1C_EPOCHS, delta) <= eps + 1e-6
        assert (r["eps_at_printed_sigma"] <= eps) == (r["sigma_for_eps"] <= SIGMA.number)


def test_sigma_dpis_le_dpsgd_statement_computed_and_reproduced():
    (m,) = [m for m in dpis.measure([]) if m.claim_id == "dpis.sec3_3.sigma_dpis_le_dpsgd"]
    assert m.kind == "statement" and m.values == (True,)
    rows = dpis.sigma_le_dpsgd()["rows"]
    for r in rows:
        assert r["dpis_sigma"] <= r["dpsgd_sigma"] * (1 + 1e-9)
        if r["ratio"] < 1:
            assert r["dpis_sigma"] < r["dpsgd_sigma"]  # strictly less noise below ratio 1


def test_sigma_at_ratio_one_is_dpsgd_and_decreases_with_ratio():
    n, eps, delta = _fig1c()
    base = dpis.dpsgd_sigma(eps, 256, n, 10, delta)
    assert dpis.sigma_at_ratio(1.0, eps, 256, n, 10, delta) == pytest.approx(base, rel=1e-6)
    values = [dpis.sigma_at_ratio(r, eps, 256, n, 10, delta) for r in (0.2, 0.5, 1.0)]
    assert values == sorted(values)


def test_paper_table_verdicts(tmp_path):
    table = paper_table("dpis", store=Store(tmp_path))
    row = table[table["claim"] == "dpis.sec3_3.sigma_dpis_le_dpsgd"].iloc[0]
    assert row["verdict"] == "reproduced"
    fig = table[table["claim"] == "dpis.sec3_3.fig1c.dpsgd_sigma"].iloc[0]
    assert fig["verdict"] == "not_run" and "unpublished setting" in str(fig["evidence"])
    imdb = table[table["claim"].str.startswith("dpis.table3.imdb")]
    assert len(imdb) and all("GloVe" in str(e) for e in imdb["evidence"])
    assert not any(str(e) == dpis.NOT_RUN_DEFAULT for e in table["evidence"])  # every reason is specific


def test_every_claim_is_measured_or_has_a_specific_reason():
    ids = {c.id for c in claims.load("dpis")}
    measured = {m.claim_id for m in dpis.measure([])}
    assert measured <= ids and len(measured) == len(dpis.measure([]))
    assert set(dpis.NOT_RUN) | measured == ids and not set(dpis.NOT_RUN) & measured


def test_precondition_needs_k_times_the_eq12_floor_and_fails_on_cifar_settings():
    rows = {r["dataset"]: r for r in dpis.precondition_frame()}
    for r in rows.values():
        assert r["lemma31_needs_ratio_above"] == pytest.approx(r["k"] * r["eq12_floor_ratio"])
    assert rows["cifar10"]["lemma31_needs_ratio_above"] > 0.8 > rows["mnist"]["lemma31_needs_ratio_above"]
    # Single-stage sampling: Eq. 12's floor K~ >= b C keeps every probability <= 1 ...
    norms = torch.full((1000,), 0.1, dtype=torch.float64)
    b, clip = 64, 0.1
    assert dpis.capped_draws(norms, b * clip + 1e-6, b) == 0
    # ... the first stage's k b ||g|| / K~ is capped as soon as K~ < k b C.
    assert dpis.capped_draws(norms, b * clip + 1e-6, b, k=5) == 1000


def test_eq11_charge_is_sound_and_its_cost_small():
    out = dpis.eq11_cost()
    assert out["multiplier_ours"] < out["multiplier_eq19"]  # less noise relative to C/p_K
    assert out["sigma_g_ours"] >= out["sigma_g_eq19"] >= out["sigma_dpsgd_same_steps"] * (1 - 1e-5)  # calibration tol
    assert out["sigma_g_ours"] - out["sigma_dpsgd_same_steps"] < 1e-3 * out["sigma_dpsgd_same_steps"]


def test_line32_divides_the_estimate_by_b_eq7_is_unbiased():
    b = 64
    out = dpis.line32_vs_eq7(batch_size=b)
    assert out["capped"] == 0
    assert out["term_norm_eq7"] == pytest.approx(out["k_over_n"])
    assert out["term_norm_line32"] == pytest.approx(out["k_over_n"] / b)
    assert out["bias_eq7"] < 1e-12
    assert out["ratio_line32"] == pytest.approx(1 / b)


@pytest.mark.slow
def test_schedule_is_constant_at_ratio_one_and_drops_in_phase_two():
    # Figure 1c's setting (b = 256, ours); ~30 s: integer-order RDP is evaluated in Python.
    n, eps, delta = _fig1c()
    flat = dpis.schedule(1.0, 0.8)
    dpsgd = noise_multiplier(eps, 256 / n, round(n / 256) * dpis.FIG1C_EPOCHS, delta, accountant="dpis")
    assert max(flat) - min(flat) < 1e-6 and abs(flat[0] - dpsgd) < 1e-3 * dpsgd
    half = dpis.schedule(0.5, 0.8)
    split = int(0.8 * dpis.FIG1C_EPOCHS)
    drops = [half[i] - half[i + 1] for i in range(len(half) - 1)]
    assert max(range(len(drops)), key=drops.__getitem__) == split - 1  # the largest drop enters phase 2
    assert all(d >= -1e-9 for d in drops)
    last_only = dpis.schedule(0.5, 1.0)  # a_E = 1 (Table 2, FMNIST): the big drop only at the last epoch
    drops1 = [last_only[i] - last_only[i + 1] for i in range(len(last_only) - 1)]
    assert max(range(len(drops1)), key=drops1.__getitem__) == len(drops1) - 1


@pytest.mark.parametrize("profile", PROFILES)
def test_configs_resolve_to_valid_unique_specs(profile):
    configs = dpis.configs(profile)
    if profile == "paper":  # Table 3's CIFAR-10 runs come last (tests/test_paper_scale.py)
        cifar = dpis.cifar10_configs()
        assert configs[-len(cifar):] == cifar
        configs = configs[:-len(cifar)]
    specs = [resolve(c) for c in configs]
    assert len({s.id for s in specs}) == len(specs)
    assert len({(c["experiment"], c["seed"]) for c in configs}) == len(configs)
    for c in configs:
        json.dumps(c)
        assert c["paper"] == "dpis" and c["profile"] == profile
    assert {c["method"] for c in configs} == ({"dpis", "dpsgd"} if profile == "smoke"
                                              else {"dpis", "dpsgd", "dpsgd_decay"})
    for c in configs:
        if c["method"] == "dpis":  # the paper's method: Table 2's k (but Table 6's), capped draws charged
            name = dpis.DATASETS[c["dataset"]]
            if ".k" not in c["experiment"]:
                assert c["method_config"]["k"] == claims.setting(f"dpis.table2.{name}.k")
            assert c["method_config"]["on_capped"] == "dpsgd"


def test_paper_profile_answers_its_table3_cells_and_says_what_is_missing():
    cells = dpis.table3_cells()
    ablations = {c["experiment"] for c in dpis.ablation_configs()}
    decay_grid = {c["experiment"] for c in dpis.decay_paper_configs()}  # the paper's rate range (issue 47)
    experiments = {c["experiment"]: c for c in dpis.configs("paper") if c not in dpis.cifar10_configs()
                   and c["experiment"] not in ablations | decay_grid and not c["experiment"].endswith(dpis.DECAY_PROBE)}
    assert set(cells.values()) == set(experiments) and len(cells) == 8 + 12
    for cid, experiment in cells.items():
        c = experiments[experiment]
        eps = c["method_config"]["epsilon"] if c["method"] == "dpis" else None
        assert claims.get(cid) and cid not in dpis.NOT_RUN
        assert c["subset"] == {"train": None, "test": None}
        assert c["train"]["epochs"] == dpis.PAPER_EPOCHS[float(experiment.split(".")[1][3:])]
        if eps is not None:
            assert f".{dpis._eps_key(eps)}." in cid
    measured = {m.claim_id: m for m in dpis.measure([])}
    assert all(measured[cid].kind == "missing" and "paper-profile run missing" in measured[cid].basis
               for cid in cells)
    spec = resolve(experiments["fmnist.eps1.dpis"])
    record = {"id": spec.id, "spec": spec.to_dict(), "final": {"test_acc": 0.861},
              "epochs": [{"dpis_capped_draws": 2}, {"dpis_capped_draws": 1}]}
    m = {m.claim_id: m for m in dpis.measure([record])}["dpis.table3.fmnist.eps1.dpis"]
    assert m.kind == "training" and m.values == (pytest.approx(86.1),) and "3 capped" in m.detail


def test_raw_pixel_baselines_are_papernots_cnn_at_tramer_bonehs_end_to_end_settings():
    raw = {c["experiment"]: c for c in dpis.raw_configs("paper")}
    assert len(raw) == 16  # 3 baselines and the tanh Decay probe x (MNIST eps 1, 3; Fashion-MNIST eps 1, 4)
    for experiment, c in raw.items():
        name, eps_key, tag = experiment.split(".")
        eps = float(eps_key[3:])
        data = {v: k for k, v in dpis.DATASETS.items()}[name]
        t = c["train"]
        tanh = tag in ("dpsgd_ts", dpis.DECAY_PROBE)
        assert c["model"] == "tf-mnist-cnn" and c["model_kwargs"] == {"activation": "tanh" if tanh else "relu"}
        assert c["method"] == ("dpsgd_decay" if tag.startswith("dpsgd_decay") else "dpsgd")
        assert (t["batch_size"], t["lr"]) == (dpis.TB_END_TO_END[data]["batch_size"], dpis.TB_END_TO_END[data]["lr"])
        assert t["clip"] == dpis.TB_CLIP and t["optimizer"] == "momentum" and t["epochs"] == dpis.PAPER_EPOCHS[eps]
        n = claims.setting(f"dpis.data.{name}.n_train")
        q, per_epoch = t["batch_size"] / n, round(n / t["batch_size"])
        rate = c["method_config"].get("decay_rate", 0.0)

        def eps_at(sigma):
            led = dpsgd_decay.ledger(sigma, rate, q, per_epoch, t["epochs"])
            return price(led, t["delta"], "dpis")["dpis"]["epsilon"]

        # sigma (sigma_0 for Decay) meets the cell's eps and is the smallest such 4-digit value
        sigma = t["noise_multiplier"]
        assert eps_at(sigma) <= eps < eps_at(sigma - 10.0 ** (math.floor(math.log10(sigma)) - 3))
    assert raw["mnist.eps1.dpsgd_decay"]["method_config"] == {"decay_rate": dpis.DECAY_RATE}
    # A record of a raw baseline answers its Table 3 cell, with the settings that are ours.
    spec = resolve(raw["mnist.eps3.dpsgd_ts"])
    record = {"id": spec.id, "spec": spec.to_dict(), "final": {"test_acc": 0.975}, "epochs": [{}]}
    m = {m.claim_id: m for m in dpis.measure([record])}["dpis.table3.mnist.eps3.dpsgd_ts"]
    assert m.kind == "training" and m.values == (pytest.approx(97.5),) and "end-to-end" in m.detail
    assert "CPU part's budgets" in dpis.NOT_RUN["dpis.table3.mnist.eps2.dpsgd"]


def test_smoke_configs_use_the_papers_settings():
    dp, sgd = dpis.configs("smoke")
    n = dp["subset"]["train"]
    assert dp["method_config"]["sigma_n"] == pytest.approx(claims.setting("dpis.setup.sigma_n_over_n") * n)
    assert dp["method_config"]["a_e"] == claims.setting("dpis.table2.mnist.a_e")
    eps = dp["method_config"]["epsilon"]
    assert eps == claims.setting("dpis.setup.epsilon5")
    t = sgd["train"]
    sigma = noise_multiplier(eps, t["batch_size"] / n, t["steps_per_epoch"] * t["epochs"], t["delta"],
                                  accountant="dpis")
    # the smallest 4-significant-digit sigma meeting eps: at most one grid step above the root
    assert (sigma <= t["noise_multiplier"] < sigma * (1 + 1e-3)
            and float(f"{t['noise_multiplier']:.4g}") == t["noise_multiplier"])
    assert dpis.dpsgd_epsilon(t["noise_multiplier"], t["batch_size"], n, t["epochs"] * t["steps_per_epoch"]
                              * t["batch_size"] / n, t["delta"]) <= eps
    assert t["momentum"] == claims.setting("dpis.setup.momentum") and t["optimizer"] == "momentum"


def test_bad_inputs_name_the_parameter():
    with pytest.raises(ValueError, match="profile"):
        dpis.configs("huge")
    with pytest.raises(ValueError, match="ratio"):
        dpis.sigma_at_ratio(0.001, 1.0, 256, 60000, 10, 1e-5)
    with pytest.raises(ValueError, match="batch_size"):
        dpis.dpsgd_epsilon(0.8, 70000, 60000, 10, 1e-5)
    with pytest.raises(ValueError, match="sigma"):
        dpis.dpsgd_epsilon(0.0, 256, 60000, 10, 1e-5)
    with pytest.raises(ValueError, match="dataset"):
        dpis._images("cifar100", 10, 10, "scatternet-cnn")


def test_smoke_execute_end_to_end():
    dp, sgd = (resolve(c) for c in dpis.configs("smoke"))
    out = dpis.execute(dp, progress=False)
    eps = dp.method_config["epsilon"]
    assert out["privacy"]["epsilon"]["dpis"]["epsilon"] <= eps + 1e-9
    (epoch,) = out["epochs"]
    assert epoch["dpis_capped_draws"] == 0 and epoch["dpis_min_margin"] > 0
    assert 0 < epoch["dpis_ratio"] <= 1 and epoch["dpis_sigma_g"] > 0
    assert out["final"]["steps"] == dp.train["steps_per_epoch"]
    base = dpis.execute(sgd, progress=False)
    assert base["privacy"]["epsilon"]["dpis"]["epsilon"] <= eps + 1e-6


def test_ablation_cells_map_to_runs_and_defaults_reuse_them():
    cells = dpis.ablation_cells()
    experiments = {c["experiment"]: c for c in dpis.configs("paper")}
    ids = {c.id for c in claims.load("dpis")}
    assert set(cells) <= ids and set(cells.values()) <= set(experiments)
    assert {c["experiment"] for c in dpis.ablation_configs()} <= set(cells.values())  # every run answers a cell
    assert not set(cells) & set(dpis.NOT_RUN)
    # Table 2's defaults are the CPU part's runs: MNIST a_E 0.8, Fashion-MNIST a_E 1, k 5, C* 4
    assert cells["dpis.table5.mnist.a_e0_8"] == cells["dpis.table6.mnist.k5"] == "mnist.eps1.dpis"
    assert cells["dpis.table5.fmnist.a_e1"] == "fmnist.eps1.dpis"
    assert cells["dpis.table7.fmnist.c_star4"] == cells["dpis.table4.fmnist.eps1.dpis_ac"] == "fmnist.eps1.dpis_ac"
    assert cells["dpis.table4.mnist.eps3.dpis_no_ac"] == "mnist.eps3.dpis"
    for name in ("mnist.eps1.dpis_ac", "mnist.eps1.dpis_ac.c_star6"):
        c = experiments[name]
        mc = c["method_config"]
        assert mc["adaptive_clipping"] and mc["initial_clip"] == dpis.TB_CLIP
        assert c["train"]["clip"] == pytest.approx(mc["lam"] * mc["c_star"] * mc["initial_clip"])
        assert resolve(c).method_config["c_star"] == mc["c_star"]
    assert experiments["fmnist.eps1.dpis.k3"]["method_config"]["k"] == 3.0
    assert experiments["mnist.eps1.dpis.a_e0"]["method_config"]["a_e"] == 0.0
    measured = {m.claim_id: m for m in dpis.measure([])}
    assert measured["dpis.table6.mnist.k3"].kind == "missing" and "ablations" in measured["dpis.table6.mnist.k3"].basis
    spec = resolve(experiments["mnist.eps1.dpis.k3"])
    record = {"id": spec.id, "spec": spec.to_dict(), "final": {"test_acc": 0.977}, "epochs": [{}]}
    m = {m.claim_id: m for m in dpis.measure([record])}["dpis.table6.mnist.k3"]
    assert m.kind == "training" and m.values == (pytest.approx(97.7),) and "prints no eps" in m.detail


def _record(experiment, acc, sigmas=(1.0,), seed=0):
    config = next(c for c in dpis.configs("paper") if c["experiment"] == experiment and c["seed"] == seed)
    spec = resolve(config)
    return {"id": spec.id, "spec": spec.to_dict(), "final": {"test_acc": acc},
            "epochs": [{"dpis_sigma_g": s} for s in sigmas]}


def test_noise_drop_and_figure1_read_sigma_g_off_the_table3_runs():
    falling = {"fmnist.eps1.dpis": (2.0, 1.8, 1.1), "fmnist.eps4.dpis": (1.5, 1.5, 0.8),
               "mnist.eps1.dpis": (2.0, 1.9, 1.15), "mnist.eps3.dpis": (1.4, 1.3, 0.77)}
    records = [_record(e, 0.9, s) for e, s in falling.items()]
    m = {m.claim_id: m for m in dpis.measure(records[:3])}
    assert m["dpis.sec4_2.noise_drop.mnist_fmnist"].kind == "missing"  # one Table 3 DPIS run short
    m = {m.claim_id: m for m in dpis.measure(records)}
    drop, fig1 = m["dpis.sec4_2.noise_drop.mnist_fmnist"], m["dpis.sec3_3.fig1.dpis_sigma_decreases"]
    assert drop.values == (True,) and fig1.values == (True,) and drop.seeds == 1  # drops 45, 47, 42.5, 45%
    assert "(45%)" in drop.detail and len(fig1.record_ids) == 2
    rising = records[:1] + [_record("fmnist.eps4.dpis", 0.9, (1.5, 1.6, 0.8))] + records[2:]
    assert {m.claim_id: m for m in dpis.measure(rising)}["dpis.sec3_3.fig1.dpis_sigma_decreases"].values == (False,)
    small = records[:3] + [_record("mnist.eps3.dpis", 0.9, (1.4, 1.3, 1.0))]  # a 29% drop
    assert {m.claim_id: m for m in dpis.measure(small)}["dpis.sec4_2.noise_drop.mnist_fmnist"].values == (False,)
    # a second seed is averaged epoch by epoch
    two = records + [_record("mnist.eps3.dpis", 0.9, (1.4, 1.3, 0.63), seed=1)]
    assert dpis.sigma_trajectories(two)["mnist.eps3.dpis"] == pytest.approx([1.4, 1.3, 0.7])


def test_section5_5_sentences_from_the_ablation_runs():
    cells = dpis.ablation_cells()

    def runs(table, accs):
        out = []
        for d in ("mnist", "fmnist"):
            for v, a in accs.items():
                out.append(_record(cells[f"dpis.{table}.{d}.{v}"], a))
        return list({r["id"]: r for r in out}.values())  # a Table 2 default answers two cells

    k = {"k3": 0.977, "k4": 0.978, "k5": 0.98, "k6": 0.979}
    m = {m.claim_id: m for m in dpis.measure(runs("table6", k))}["dpis.sec5_5.k_insensitive"]
    assert m.kind == "statement" and m.values == (True,) and "k3 97.70%" in m.detail
    assert "CIFAR-10" in m.rule and m.seeds == 1 and "paired" in m.rule
    # an equivalence on paired seeds: each k's difference to k = 5 within +- FLAT, both one-sided comparisons
    labels = dict(m.comparisons)
    assert labels["mnist k3 - k5 below +0.5"] == pytest.approx((FLAT - (97.7 - 98.0),))
    assert labels["mnist k3 - k5 above -0.5"] == pytest.approx((FLAT + (97.7 - 98.0),))
    m = {m.claim_id: m for m in dpis.measure(runs("table6", {**k, "k3": 0.96}))}["dpis.sec5_5.k_insensitive"]
    assert m.values == (False,)
    assert {m.claim_id: m for m in dpis.measure(runs("table6", dict(list(k.items())[1:])))}[
        "dpis.sec5_5.k_insensitive"].kind == "missing"
    a_e = {"a_e0": 0.97, "a_e0_6": 0.975, "a_e0_8": 0.978, "a_e1": 0.98}
    m = {m.claim_id: m for m in dpis.measure(runs("table5", a_e))}["dpis.sec5_5.a_e_0_8_favorable"]
    assert m.values == (True,) and all("below +0.5" in label for label, _ in m.comparisons)  # one-sided
    m = {m.claim_id: m for m in dpis.measure(runs("table5", {**a_e, "a_e0_8": 0.968}))}["dpis.sec5_5.a_e_0_8_favorable"]
    assert m.values == (False,)
    ac = runs("table4", {"eps1.dpis_ac": 0.97, "eps1.dpis_no_ac": 0.975})
    m = {m.claim_id: m for m in dpis.measure(ac)}["dpis.sec5_5.ac_helps_imdb_only"]
    assert m.kind == "missing" and "GloVe" in m.basis and "DPIS+AC - DPIS = -0.50" in m.detail


def test_run_costs_count_gradients_capped_draws_and_compare_walls_on_one_device():
    n = dpis._n_train("mnist")
    seg = [{"device": "cpu: x86_64, 1 threads"}]
    dp = _record("mnist.eps3.dpis", 0.98)
    dp["epochs"] = [{"epoch": 1, "dpis_drawn": 4 * n, "dpis_capped_draws": 0, "dpis_min_margin": 5.0, "wall_s": 6.0},
                    {"epoch": 2, "dpis_drawn": 6 * n, "dpis_capped_draws": 7, "dpis_min_margin": -1.0, "wall_s": 10.0}]
    dp["provenance"] = {"segments": seg}
    dp["privacy"] = {"epsilon": {"dpis": {"epsilon": 2.9}}}
    hf = _record("mnist.eps3.dpsgd_hf", 0.97)
    hf["epochs"] = [{"wall_s": 2.0}]
    hf["provenance"] = {"segments": seg}
    (row,) = dpis.run_costs([dp, hf])
    assert row["grads_per_epoch_over_n"] == pytest.approx(6.0)  # (N + 4N + N + 6N) / 2N
    assert row["capped_draws"] == 7 and row["capped_epochs"] == [2] and row["min_margin"] == -1.0
    assert row["wall_per_epoch_vs_hf"] == pytest.approx(4.0) and row["epsilon"] == 2.9 and row["budget"] == 3.0
    hf["provenance"] = {"segments": [{"device": "cuda: NVIDIA H100 80GB HBM3"}]}
    assert dpis.run_costs([dp, hf])[0]["wall_per_epoch_vs_hf"] is None  # walls on two devices: not compared


def test_repeated_cells_and_features_share_read_the_registry():
    rep = {r["setting"]: r for r in dpis.repeated_cells()}
    assert all(len(r["cells"]) > 1 for r in rep.values())
    assert {"dpis.table3.mnist.eps1.dpis", "dpis.table6.mnist.k5"} <= set(rep["mnist.eps1.dpis"]["cells"])
    for r in rep.values():
        assert r["differ"] == (len(set(r["cells"].values())) > 1)
    fs = {(r["dataset"], r["eps"]): r for r in dpis.features_share()}
    r = fs[("mnist", "eps1")]
    assert r["dpis"] == claims.get("dpis.table3.mnist.eps1.dpis").number
    assert r["features_share"] == pytest.approx((r["dpsgd_hf"] - r["dpsgd"]) / (r["dpis"] - r["dpsgd"]))
    assert len(fs) == 10 and all(0 < r["features_share"] <= 1 for r in fs.values())


def test_ac_release_rdp_prices_both_readings_at_the_runs_order():
    rec = _record("mnist.eps1.dpis_ac", 0.97)
    rec["privacy"] = {"epsilon": {"dpis": {"epsilon": 1.0, "order": 18.0}}}
    (row,) = dpis.ac_release_rdp([rec, _record("mnist.eps1.dpis", 0.97)])  # runs without AC: no row
    sigma_k = rec["spec"]["method_config"]["sigma_k"]
    assert row["releases"] == dpis.PAPER_EPOCHS[1.0] - 1
    assert row["rdp_full_sum"] == pytest.approx(row["releases"] * 18 / (2 * sigma_k ** 2))  # Gaussian RDP
    assert 0 < row["rdp_subsampled"] < row["rdp_full_sum"]


def test_gains_pair_dpis_and_dpsgd_hf_by_seed():
    records = [_record("mnist.eps1.dpis", 0.98), _record("mnist.eps1.dpsgd_hf", 0.975),
               _record("mnist.eps1.dpis", 0.97, seed=1), _record("mnist.eps1.dpsgd_hf", 0.972, seed=1),
               _record("mnist.eps3.dpis", 0.99, seed=2)]  # no DP-SGD-HF partner: no row
    (row,) = dpis.gains(records)
    paper = (claims.get("dpis.table3.mnist.eps1.dpis").number - claims.get("dpis.table3.mnist.eps1.dpsgd_hf").number)
    assert row["cell"] == "mnist.eps1" and row["paper_gain"] == pytest.approx(paper)
    assert row["per_seed"] == pytest.approx([0.5, -0.2]) and row["ours_gain"] == pytest.approx(0.15)
    assert row["seeds"] == 2 and row["ours_sd"] == pytest.approx(0.245 ** 0.5)
    assert dpis.gains(records[:1]) == []


def test_section5_4_sentences_pair_every_method_of_each_cell_by_seed():
    cells = sorted(set(dpis.table3_cells().values()))
    acc = {"dpis": 0.90, "dpsgd_hf": 0.89, "dpsgd": 0.85, "dpsgd_ts": 0.87, "dpsgd_decay": 0.86}
    records = [_record(e, acc[e.rsplit(".", 1)[1]]) for e in cells]
    m = {m.claim_id: m for m in dpis.measure(records[:-1])}
    assert m["dpis.sec5_4.dpis_best_everywhere"].kind == "missing"  # one run short
    m = {m.claim_id: m for m in dpis.measure(records)}
    best, decay = m["dpis.sec5_4.dpis_best_everywhere"], m["dpis.sec5_4.decay_not_better"]
    assert best.values == (True,) and best.seeds == 1 and "+1.00" in best.detail
    assert decay.values == (True,)  # Decay (86) below TS (87) in every cell
    assert decay.quantifier == "some" and len(decay.comparisons) == 4  # per cell: the better baseline - Decay
    assert all(label.endswith("dpsgd_ts - dpsgd_decay") and v == pytest.approx((1.0,))
               for label, v in decay.comparisons)
    # DPIS below DP-SGD-HF in one cell: not best everywhere; Decay above both everywhere: "not better" fails
    worse = [_record(e, 0.91 if e == "mnist.eps3.dpsgd_hf"
                     else (0.88 if e.endswith("decay") else acc[e.rsplit(".", 1)[1]]))
             for e in cells]
    m = {m.claim_id: m for m in dpis.measure(worse)}
    assert m["dpis.sec5_4.dpis_best_everywhere"].values == (False,)
    assert m["dpis.sec5_4.decay_not_better"].values == (False,)
    # A second DPIS seed without its baselines is left out of the paired means.
    extra = records + [_record("mnist.eps1.dpis", 0.50, seed=1)]
    assert dpis.table3_methods(dpis_current(extra))["mnist.eps1"]["dpis"] == pytest.approx(90.0)
    m = {m.claim_id: m for m in dpis.measure(extra)}["dpis.sec5_4.dpis_best_everywhere"]
    assert m.seeds == 1 and len(m.record_ids) == len(records)
    gaps = {r["cell"]: r for r in dpis.raw_gaps(records)}
    assert gaps["fmnist.eps4"]["ours: DPIS - DP-SGD"] == pytest.approx(5.0)
    assert gaps["fmnist.eps4"]["ours: features share"] == pytest.approx(0.8)
    p = {m: claims.get(f"dpis.table3.fmnist.eps4.{m}").number for m in ("dpis", "dpsgd_hf", "dpsgd")}
    assert gaps["fmnist.eps4"]["paper: HF - DP-SGD"] == pytest.approx(p["dpsgd_hf"] - p["dpsgd"])


def dpis_current(records):
    from dpnotes.experiments import current
    return current(records, dpis.configs("paper"))


def test_decay_activation_compares_the_papers_decay_with_ours_under_both_activations():
    cells = sorted({c["experiment"] for c in dpis.raw_configs("paper")})
    acc = {"dpsgd": 0.94, "dpsgd_ts": 0.967, "dpsgd_decay": 0.941, dpis.DECAY_PROBE: 0.968}
    records = [_record(e, acc[e.split(".", 2)[2]]) for e in cells]
    assert dpis.decay_activation(records[:-1]) and len(dpis.decay_activation(records[:-1])) == 3
    rows = {r["cell"]: r for r in dpis.decay_activation(records)}
    assert len(rows) == 4
    r = rows["mnist.eps1"]
    p = {m: claims.get(f"dpis.table3.mnist.eps1.{m}").number for m in ("dpsgd", "dpsgd_ts", "dpsgd_decay")}
    assert r["paper: Decay - TS"] == pytest.approx(p["dpsgd_decay"] - p["dpsgd_ts"])
    assert r["ours ReLU: Decay - DP-SGD"] == pytest.approx(0.1) and r["ours tanh: Decay - TS"] == pytest.approx(0.1)
    assert r["ours ReLU Decay"] == pytest.approx(94.1) and r["ours tanh Decay"] == pytest.approx(96.8)
