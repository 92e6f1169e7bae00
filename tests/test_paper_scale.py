"""Paper scale (issue 34): every paper-profile config has a cost estimate, the long and GPU-scale
configs are the papers' settings, and each configuration family runs through its paper's own
code path on CPU with epochs and data cut to a few steps (smoke tests, seconds each)."""

from __future__ import annotations

import copy
import math

import pytest

from dpnotes import claims
from dpnotes.executors import cost as plan
from dpnotes.experiments import dpis, dplis, labeldp, module, resolve, sadpsgd
from dpnotes.experiments import run_cost as cost
from dpnotes.results import Store
from dpnotes.spec import RunSpec

PAPERS = ("dplis", "dpis", "gdp", "labeldp", "sadpsgd")


@pytest.mark.parametrize("paper", PAPERS)
def test_every_paper_config_has_an_estimate(paper, tmp_path):
    specs = [resolve(c) for c in module(paper).configs("paper")]
    assert len({s.id for s in specs}) == len(specs)
    records = cost.reference_records(paper, "paper", Store(tmp_path))
    for spec in specs:
        seconds, basis = cost.estimate(spec, records)
        assert seconds is not None and seconds > 0, (spec.experiment, basis)
    lines = plan.plan(specs, Store(tmp_path))
    assert "?" not in "".join(line.split("(")[0] for line in lines)


def _spec(**change) -> RunSpec:
    config = {"paper": "dplis", "profile": "paper", "experiment": "x", "seed": 0, "model": "dplis-mlp-mnist",
              "dataset": "mnist", "method": "dpsgd",
              "train": {"epochs": 3, "batch_size": 256, "grad_backend": "ghost", "steps_per_epoch": "floor"}}
    for key, value in change.items():
        config[key] = value
    return resolve(config)


def test_bench_estimate_is_steps_times_batch_over_throughput_plus_evaluation():
    rates = cost.BENCH["cpu"]["dplis-mlp-mnist"]
    step = 60_000 // 256 * 256 / rates["ghost"]
    evaluation = 10_000 / (cost.EVAL_SPEEDUP * rates["nonprivate"])
    assert cost.bench_seconds(_spec(), "cpu") == pytest.approx(3 * (step + evaluation))
    cuda = cost.BENCH["cuda"]["dplis-mlp-mnist"]
    assert cost.bench_seconds(_spec(), "cuda") == pytest.approx(
        3 * (60_000 // 256 * 256 / cuda["ghost"] + 10_000 / (cost.EVAL_SPEEDUP * cuda["nonprivate"])))
    # DPlis' K draws: the K = 10 CPU figure scaled to K; on CUDA K ghost steps
    smoothed = _spec(method="dplis", method_config={"K": 5, "R": 10.0})
    assert cost.bench_seconds(smoothed, "cpu") == pytest.approx(
        3 * (60_000 // 256 * 256 / (rates["dplis"] * 2) + evaluation))
    assert cost.bench_seconds(smoothed, "cuda") == pytest.approx(
        3 * (60_000 // 256 * 256 / (cuda["ghost"] / 5) + 10_000 / (cost.EVAL_SPEEDUP * cuda["nonprivate"])))
    seconds, basis = cost.estimate(_spec(), [])
    assert seconds == cost.bench_seconds(_spec(), "cpu") and basis.startswith("bench estimate, cpu 1 thread; cuda ")
    assert cost.bench_seconds(_spec(model="gdp-adult", dataset="adult"), "cpu") is None  # no size of that set
    assert cost.bench_seconds(_spec(model="dpis-imdb-bilstm", dataset="imdb"), "cuda") is None  # no CUDA row


def test_a_record_of_another_spec_is_scaled_to_the_epochs():
    record = {"id": "r", "spec": {"experiment": "x", "model": "dplis-mlp-mnist", "method": "dpsgd",
                                  "train": {"epochs": 2, "grad_backend": "ghost"}},
              "provenance": {"wall_time_s": 100.0}}
    seconds, basis = cost.estimate(_spec(), [record])
    assert seconds == pytest.approx(150.0) and basis == "same experiment, 1 record(s) scaled to its epochs"
    assert cost.gpu_scale(cost.GPU_SCALE_HOURS * 3600 + 1) and not cost.gpu_scale(None)


def test_a_cpu_record_of_another_backend_is_scaled_by_the_bench_ratio():
    rates = cost.BENCH["cpu"]["dplis-mlp-mnist"]
    record = {"id": "r", "spec": {"experiment": "x", "model": "dplis-mlp-mnist", "method": "dpsgd",
                                  "train": {"epochs": 3}},  # no grad_backend: func
              "provenance": {"wall_time_s": 600.0, "segments": [{"device": "cpu: x86_64, 1 threads"}]}}
    seconds, basis = cost.estimate(_spec(), [record])  # the new seed runs on ghost
    assert seconds == pytest.approx(600.0 * rates["func"] / rates["ghost"])
    assert basis == "same experiment, 1 record(s) on cpu scaled to its backend (ghost, bench)"
    assert cost.estimate(_spec(train={"epochs": 3, "batch_size": 256, "grad_backend": "func"}), [record])[0] == 600.0
    cuda = {**record, "provenance": {"wall_time_s": 600.0, "segments": [{"device": "cuda: NVIDIA H100"}]}}
    assert cost.estimate(_spec(), [cuda])[0] == 600.0  # the bench ratios are CPU figures
    dplis_func = {**record, "spec": {**record["spec"], "method": "dplis"}}  # no bench figure for a func K-draw step
    assert cost.estimate(_spec(method="dplis", method_config={"K": 10, "R": 10.0}), [dplis_func])[0] == 600.0


# --------------------------------------------------------------------------------------
# DPlis' long runs.

def _strip(config: dict) -> dict:
    config = copy.deepcopy(config)
    config["experiment"], config["train"]["epochs"] = "", 0
    config.get("method_config", {}).pop("R", None)
    config["train"].pop("grad_backend", None)  # checked on its own: GHOST_FROM_SEED
    config.get("method_config", {}).pop("draws", None)  # checked on its own: DRAWS_FROM_SEED
    return config


def test_dplis_long_runs_answer_every_column_of_tables_2_and_11():
    paper = {(c["experiment"], c["seed"]): c for c in dplis.configs("paper")}
    for row, r_ in dplis.ROWS.items():
        for column in dplis.LONG_COLUMNS:
            for arm in dplis.ARMS:
                experiment, epoch = dplis.long_run(row, arm, column)
                config = paper[experiment, 0]
                assert epoch == dplis.column_epoch(r_.dataset, column) <= config["train"]["epochs"]
                r = dplis.radius(row, arm, column)
                assert config.get("method_config", {}).get("R") == r
                assert (config["method"] == "dpsgd") == (r is None)
                # the same settings as the eps-1.99 cell of that arm but for R, the epochs and (the
                # MNIST CNN's long runs, none stored on func) the backend
                assert _strip(config) == _strip(dplis._config("paper", row, "no" if r is None else "r10"))
                ghost = r_.backend == "ghost" or row == "mnist_cnn"
                assert config["train"].get("grad_backend") == ("ghost" if ghost else None), (row, column, arm)
                implicit = row.endswith("_mlp") and r is not None  # the MLPs' smoothed long runs, none stored
                assert config.get("method_config", {}).get("draws") == (
                    "implicit-first-layer" if implicit else None), (row, column, arm)
    # R_best varies by column only in Table 11 (15, 20, 15): a run to eps 7.01 for R = 20
    assert dplis.long_radii("cifar10_cnn_tanh") == {None: "eps10_00", 10.0: "eps10_00", 15.0: "eps10_00",
                                                    20.0: "eps7_01"}
    assert paper["table2.mnist_mlp.eps10_00.r40", 0]["train"]["epochs"] == 554


def test_dplis_table10_and_figure3():
    paper = dplis.configs("paper")
    n_runs = int(claims.setting("dplis.table10.n_runs"))
    for row in dplis.TABLE10_ROWS:
        for r in dplis.table10_radii(row):
            name = f"table2.{row}.eps10_00.{dplis._tag(r)}"
            assert sorted(c["seed"] for c in paper if c["experiment"] == name) == list(range(n_runs))
    for row in dplis.FIGURE3_ROWS:
        radii = {c.get("method_config", {}).get("R") for c in paper if c["seed"] == 0 and c["train"]["epochs"] ==
                 dplis.column_epoch(dplis.ROWS[row].dataset, "eps10_00")
                 and c["experiment"].split(".")[1] == row}
        assert set(dplis.FIGURE3_R) <= radii


def _cut(config: dict, *, epochs: int, steps: int, batch: int, train: int, test: int) -> dict:
    config = copy.deepcopy(config)
    config["train"].update(epochs=epochs, steps_per_epoch=steps, batch_size=batch)
    config["subset"] = {**(config.get("subset") or {}), "train": train, "test": test}
    return config


def _cifar10_or_skip():
    from dpnotes import data

    try:
        data.read_labels("cifar-10")
    except FileNotFoundError as err:
        pytest.skip(f"CIFAR-10 is not in the mirror: {err}")


@pytest.fixture
def one_thread():
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def test_dplis_long_cifar10_cnn_run_reads_its_columns_at_their_epochs(one_thread):
    _cifar10_or_skip()
    config = next(c for c in dplis.long_configs() if c["experiment"] == "table2.cifar10_cnn.eps10_00.r30")
    small = _cut(config, epochs=3, steps=2, batch=32, train=256, test=64)
    spec = resolve(small)
    assert (spec.model, spec.method, spec.method_config["R"], spec.train["grad_backend"]) == (
        "dplis-cifar-cnn", "dplis", 30.0, "ghost")
    out = dplis.execute(spec, progress=False)
    record = {"epochs": out["epochs"]}
    assert [e["epoch"] for e in out["epochs"]] == [1, 2, 3]
    for epoch in (1, 2, 3):  # the column read-out: the test accuracy after that epoch
        assert dplis._acc_at(record, epoch) == pytest.approx(100 * out["epochs"][epoch - 1]["test_acc"])
    assert dplis._acc_at(record, 4) is None  # a run that stopped earlier answers no later column
    assert all("train_acc" in e for e in out["epochs"])  # Figure 7a reads it per epoch


def test_dpis_scatternet_cifar10_config_runs(one_thread):
    _cifar10_or_skip()
    config = dpis._config("smoke", "cifar10", "dpis", 4.0, epochs=1, model=dpis.CIFAR_MODEL)
    paper = next(c for c in dpis.cifar10_configs() if c["experiment"] == "cifar10.eps4.dpis")
    assert {k: v for k, v in config.items() if k not in ("profile", "subset", "train", "method_config")} == \
        {k: v for k, v in paper.items() if k not in ("profile", "subset", "train", "method_config")}
    assert paper["train"]["batch_size"] == dpis.TRAMER_BONEH["cifar10"]["batch_size"] == 8192
    out = dpis.execute(resolve(config), progress=False)
    assert out["final"]["steps"] == 2 and math.isfinite(out["privacy"]["epsilon"]["dpis"]["epsilon"])


def test_sadpsgd_cifar10_cnn_config_runs(one_thread):
    _cifar10_or_skip()
    config = next(c for c in sadpsgd.configs("paper") if c["experiment"] == "table1.cifar10.sa_dpsgd")
    small = _cut(config, epochs=1, steps=2, batch=32, train=256, test=64)
    small["train"]["target_epsilon"] = None
    out = sadpsgd.execute(resolve(small), progress=False)
    assert out["final"]["steps"] == 2


def test_labeldp_resnet18v2_two_stage_config_runs(one_thread):
    _cifar10_or_skip()
    config = next(c for c in labeldp.cifar10_configs() if c["experiment"] == "table1.cifar10.lp_2st.eps2")
    spec = resolve(config)
    assert (spec.model, spec.train["batch_size"], spec.train["epochs"], spec.train["lr_schedule"],
            spec.train["lr_step_epochs"]) == ("resnet18v2", 512, 200, "warmup_step", 60)
    assert spec.method_config["stages"] == 2 and list(spec.method_config["augment"]) == ["crop", "flip", "cutout"]
    small = _cut(config, epochs=1, steps=1, batch=8, train=32, test=16)
    out = labeldp.execute(resolve(small), progress=False)
    assert len(out["final"]["lp_mst"]["stage_sizes"]) == 2  # both stages ran: the multi-stage schedule


def test_warmup_step_schedule_is_app_b_cifar10():
    from dpnotes.train import TrainConfig
    from dpnotes.train.optim import learning_rate

    t = TrainConfig(epochs=200, lr=0.4, lr_schedule="warmup_step", lr_warmup=0.15, lr_step_epochs=60, lr_gamma=0.1)
    lr = [learning_rate(t, epoch * 10, 10) for epoch in (0, 15, 30, 59, 60, 120, 180, 199)]
    assert lr == pytest.approx([0.0, 0.2, 0.4, 0.4, 0.04, 0.004, 0.0004, 0.0004])
    assert learning_rate(t, 75, 10) == pytest.approx(0.4 * 75 / 300)  # warming up


# --------------------------------------------------------------------------------------
# LabelDP Table 4 on App. B's simplified Inception (issue 47).

def test_labeldp_app_b_runs_are_the_small_cnn_cells_on_the_inception():
    """Each App. B run is the small-CNN run of the same Table 4 cell and seed with the model
    swapped (App. B's recipe: batch 256, momentum 0.9, 0 -> 0.02 -> 0 linearly, 40 epochs a
    stage), GPU-scale on one CPU thread, within a 15-minute campaign slot on CUDA, and picked
    by the campaign with Table 4's tier."""
    from dpnotes import campaign

    small = {(c["experiment"], c["seed"]): c for c in labeldp.configs("paper") if c["model"] == labeldp.MODEL}
    appb = labeldp.appb_configs()
    assert len(appb) == len(labeldp.APPB_SEEDS) * 2 * (5 + 4) == 54
    for c in appb:
        twin = small[c["experiment"].removesuffix(".appb"), c["seed"]]
        assert {**c, "experiment": twin["experiment"], "model": twin["model"]} == twin
        spec = resolve(c)
        assert spec.model == "labeldp-inception" and (spec.train["batch_size"], spec.train["epochs"]) == (256, 40)
        assert (spec.train["momentum"], spec.train["lr"], spec.train["lr_schedule"], c["train"]["lr_warmup"]) == (
            0.9, 0.02, "warmup_linear", 0.15)
        stages = spec.method_config.get("stages", 1)
        assert cost.gpu_scale(cost.bench_seconds(spec, "cpu"))
        assert cost.bench_seconds(spec, "cuda") < 15 * 60 / 2
        assert cost.bench_seconds(spec, "cuda") == pytest.approx(stages * cost.bench_seconds(
            resolve(appb[0]), "cuda"))  # LP-2ST priced as two full stages (an upper bound)
        assert campaign.tier("labeldp", spec.experiment) <= campaign.LAST_TIER


def test_labeldp_inception_cuda_figure_is_its_flops_at_the_basis_cnn_rate():
    from dpnotes import models
    from dpnotes.models.inception import forward_macs

    basis = cost.LABELDP_INCEPTION_CUDA_BASIS
    macs = {n: forward_macs(models.create(n), models.spec(n).input_shape) for n in (basis, "labeldp-inception")}
    assert cost.BENCH["cuda"]["labeldp-inception"]["nonprivate"] == round(
        cost.BENCH["cuda"][basis]["nonprivate"] * macs[basis] / macs["labeldp-inception"])


def test_labeldp_app_b_two_stage_config_runs(one_thread):
    config = next(c for c in labeldp.appb_configs() if c["experiment"] == "table4.fmnist.lp_2st.eps1.appb")
    small = _cut(config, epochs=1, steps=2, batch=16, train=64, test=32)
    out = labeldp.execute(resolve(small), progress=False)
    assert len(out["final"]["lp_mst"]["stage_sizes"]) == 2 and out["final"]["steps"] == 2
    assert math.isfinite(out["final"]["test_loss"])
