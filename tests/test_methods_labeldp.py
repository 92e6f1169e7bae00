"""LabelDP (Ghazi et al., NeurIPS 2021) LP-1ST as a method module: one label release, priced under label-DP."""

import math

import numpy as np
import pytest
import torch
from interrupt import Interrupted, die_at_epoch, without_wall
from scipy.stats import chi2
from torch import nn

from dpnotes import methods
from dpnotes.accounting.registry import price
from dpnotes.ledger import GaussianDpEvent, LabelRandomizedResponseDpEvent, Ledger, NonPrivateDpEvent
from dpnotes.mechanisms.randomized_response import randomized_response_probabilities
from dpnotes.mechanisms.rr_prior import rr_with_prior_probabilities
from dpnotes.methods import labeldp
from dpnotes.train import TrainConfig, train

K = 4


def _data(n=96, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 5, generator=g)
    return x, torch.randint(0, K, (n,), generator=g)


def _model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, K))


def _run(config, checkpoint=None, epochs=2, plugins=None):
    plugins = plugins or labeldp.hooks(config)
    out = train(_model(), _data(), None, TrainConfig.non_private(epochs=epochs, batch_size=16, lr=0.1),
                plugins=plugins, progress=False, checkpoint=checkpoint)
    return out, plugins[0]


def test_registered_and_resolved():
    assert "labeldp" in methods.METHODS and labeldp.VERSION == 2
    assert labeldp.resolve({"epsilon": 2.0, "num_classes": K}) == {
        "epsilon": 2.0, "num_classes": K, "mechanism": "rr", "prior": None, "stages": 1, "stage_fractions": None,
        "temperature": 1.0, "filter": True, "mixup_alpha": [0.0], "augment": []}
    settings = {"epsilon": 1.0, "num_classes": 2, "mechanism": "rr_prior", "prior": (0.25, 0.75)}
    assert labeldp.resolve(settings)["prior"] == [0.25, 0.75]


def test_one_label_event_and_randomized_targets_are_trained_on():
    out, plugin = _run(labeldp.Config(epsilon=1.0, num_classes=K))
    entries = Ledger.from_json(out["privacy"]["ledger"]).entries
    assert entries[0] == (LabelRandomizedResponseDpEvent(1.0, K, "rr"), 1)
    assert all(isinstance(e, NonPrivateDpEvent) for e, _ in entries[1:])  # feature uses are kept, not dropped
    assert sum(isinstance(e, LabelRandomizedResponseDpEvent) for e, _ in entries) == 1
    assert not torch.equal(plugin.labels, _data()[1])  # at eps 1 about half the labels change
    assert all(r["privacy_notion"] == "label" and r["label_epsilon"] == 1.0 for r in out["epochs"])


def test_pure_prices_the_label_release_and_says_inf_for_the_features():
    out, _ = _run(labeldp.Config(epsilon=2.0, num_classes=K, mechanism="rr_prior"))
    ledger = Ledger.from_json(out["privacy"]["ledger"])
    assert price(LabelRandomizedResponseDpEvent(2.0, K, "rr-with-prior"), 1e-5, "pure")["pure"]["epsilon"] == 2.0
    assert labeldp.label_epsilon(ledger) == 2.0
    assert price(ledger, 1e-5, "pure")["pure"]["epsilon"] == math.inf  # features are not protected
    with pytest.raises(ValueError, match="GaussianDpEvent"):
        labeldp.label_epsilon(ledger.copy().append(GaussianDpEvent(1.0)))


def _counts(labels, noisy):
    table = np.zeros((K, K))
    np.add.at(table, (labels.numpy(), noisy.numpy()), 1)
    return table


def _chi2_pvalue(counts, probs):
    """Pearson chi^2 of each true label's row against the mechanism's row (cells with p > 0)."""
    stat, dof = 0.0, 0
    for row, p in zip(counts, probs):
        m = row.sum()
        pos = p > 0
        assert row[~pos].sum() == 0  # never an impossible output
        stat += (((row[pos] - m * p[pos]) ** 2) / (m * p[pos])).sum()
        dof += pos.sum() - 1
    return chi2.sf(stat, dof)


@pytest.mark.parametrize("config, table", [
    (labeldp.Config(epsilon=1.0, num_classes=K), randomized_response_probabilities(K, 1.0)),
    (labeldp.Config(epsilon=1.0, num_classes=K, mechanism="rr_prior", prior=(0.5, 0.3, 0.15, 0.05)),
     rr_with_prior_probabilities(torch.tensor([0.5, 0.3, 0.15, 0.05], dtype=torch.float64), 1.0)),
])
def test_randomized_labels_follow_the_mechanism_table(config, table):
    """Chi-square goodness of fit, false-alarm rate 1e-4 per case."""
    labels = torch.arange(K).repeat(5000)
    noisy = labeldp.randomize_labels(labels, config, torch.Generator().manual_seed(3))
    assert _chi2_pvalue(_counts(labels, noisy), table) > 1e-4


def test_uniform_prior_gives_rr():
    labels = torch.arange(K).repeat(50)
    rr = labeldp.randomize_labels(labels, labeldp.Config(epsilon=1.5, num_classes=K), torch.Generator().manual_seed(7))
    prior = labeldp.randomize_labels(labels, labeldp.Config(epsilon=1.5, num_classes=K, mechanism="rr_prior"),
                                     torch.Generator().manual_seed(7))
    assert torch.equal(rr, prior)  # same draws: RRWithPrior with k* = K is RR
    assert np.allclose(rr_with_prior_probabilities(torch.full((K,), 1 / K, dtype=torch.float64), 1.5),
                       randomized_response_probabilities(K, 1.5))


def test_infinite_epsilon_keeps_the_labels():
    labels = _data()[1]
    assert torch.equal(labeldp.randomize_labels(labels, labeldp.Config(epsilon=math.inf, num_classes=K),
                                                torch.Generator()), labels)


def test_resume_keeps_the_same_randomized_labels_and_one_event(tmp_path):
    full, _ = _run(labeldp.Config(epsilon=1.0, num_classes=K), epochs=3)
    path = tmp_path / "ck.pt"

    first = labeldp.hooks(labeldp.Config(epsilon=1.0, num_classes=K))
    die_at_epoch(first[0], 2)
    with pytest.raises(Interrupted):
        _run(None, checkpoint=path, epochs=3, plugins=first)
    resumed, _ = _run(labeldp.Config(epsilon=1.0, num_classes=K), checkpoint=path, epochs=3)
    assert without_wall(resumed["epochs"]) == without_wall(full["epochs"])
    assert resumed["privacy"]["ledger"] == full["privacy"]["ledger"]


@pytest.mark.parametrize("settings, name", [
    ({"epsilon": 0.0}, "epsilon"), ({"epsilon": -1.0}, "epsilon"),
    ({"num_classes": 1}, "num_classes"), ({"mechanism": "rrtopk"}, "mechanism"),
    ({"mechanism": "rr_prior", "prior": (0.5, 0.4, 0.05, 0.0)}, "prior"),
    ({"mechanism": "rr_prior", "prior": (1.2, -0.2, 0.0, 0.0)}, "prior"),
    ({"mechanism": "rr_prior", "prior": (0.5, 0.5)}, "prior"),
    ({"prior": (0.25,) * 4}, "prior"),
    ({"stages": 0}, "stages"), ({"stages": 2, "mixup_alpha": (0, 0)}, "rr_prior"),
    ({"mechanism": "rr_prior", "stages": 2, "mixup_alpha": (0,)}, "mixup_alpha"),
    ({"mechanism": "rr_prior", "stages": 2, "mixup_alpha": (0, 0), "stage_fractions": (0.5, 0.6)}, "sum to 1"),
    ({"mechanism": "rr_prior", "stages": 2, "mixup_alpha": (0, 0), "stage_fractions": (1.0, 0.0)},
     r"stage_fractions\[0\]"),
    ({"mechanism": "rr_prior", "stages": 2, "mixup_alpha": (0, 0), "temperature": 0.0}, "temperature"),
    ({"mixup_alpha": (-1.0,)}, r"mixup_alpha\[0\]"), ({"augment": ("rotate",)}, "augment"),
])
def test_bad_settings_name_the_parameter(settings, name):
    with pytest.raises(ValueError, match=name):
        labeldp.Config(**{"epsilon": 1.0, "num_classes": K, **settings})


def test_labels_outside_the_class_range_are_refused():
    with pytest.raises(ValueError, match="labels"):
        _run(labeldp.Config(epsilon=1.0, num_classes=3))  # the data has labels 0..3


def test_private_training_is_refused():
    with pytest.raises(ValueError, match="non_private"):
        train(_model(), _data(), None, TrainConfig(epochs=1, batch_size=16),
              plugins=labeldp.hooks(labeldp.Config(epsilon=1.0, num_classes=K)), progress=False)


# --- LP-MST (Algorithm 3) -------------------------------------------------------------

def _two_stage(**kw):
    settings = {"epsilon": 1.0, "num_classes": K, "mechanism": "rr_prior", "stages": 2, "mixup_alpha": (0.0, 0.0),
                "stage_fractions": (0.6, 0.4), **kw}
    return labeldp.Config(**settings)


def _run_mst(config, checkpoint=None, epochs=2):
    return labeldp.run(_model(), _data(), None, TrainConfig.non_private(epochs=epochs, batch_size=16, lr=0.1),
                       config, progress=False, checkpoint=checkpoint)


def test_lp2st_queries_every_label_exactly_once_and_costs_eps(monkeypatch):
    calls = []
    real = labeldp.rr_with_prior

    def spy(labels, priors, epsilon, *, generator, **kw):
        calls.append((len(labels), epsilon))
        return real(labels, priors, epsilon, generator=generator, **kw)

    monkeypatch.setattr(labeldp, "rr_with_prior", spy)
    out = _run_mst(_two_stage())
    n = len(_data()[1])
    assert [c[0] for c in calls] == out["final"]["lp_mst"]["stage_sizes"] and sum(c[0] for c in calls) == n
    assert all(c[1] == 1.0 for c in calls)
    ledger = Ledger.from_json(out["privacy"]["ledger"])
    assert [e for e, _ in ledger.entries if isinstance(e, LabelRandomizedResponseDpEvent)] == [
        LabelRandomizedResponseDpEvent(1.0, K, "lp-mst")]
    assert [e["stage"] for e in out["epochs"]] == [1, 1, 2, 2]
    assert all(e["label_epsilon"] == 1.0 for e in out["epochs"])  # parallel composition: eps, not 2 eps
    assert labeldp.label_epsilon(ledger) == 1.0
    steps = sum(1 for e, c in ledger.entries for _ in range(c) if isinstance(e, NonPrivateDpEvent))
    assert steps == out["epochs"][1]["steps"] + out["epochs"][3]["steps"]


def test_stage_parts_partition_the_data_without_labels():
    parts = labeldp.stage_parts(103, (0.65, 0.35), torch.Generator().manual_seed(3))
    assert [len(p) for p in parts] == [67, 36]
    assert torch.equal(torch.sort(torch.cat(parts)).values, torch.arange(103))
    with pytest.raises(ValueError, match="without examples"):
        labeldp.stage_parts(3, (0.9, 0.1), torch.Generator())


def test_filter_keeps_earlier_examples_in_the_top_k_bar_only():
    kept = _run_mst(_two_stage(epsilon=0.5))["final"]["lp_mst"]
    everything = _run_mst(_two_stage(epsilon=0.5, filter=False))["final"]["lp_mst"]
    n = len(_data()[1])
    assert everything["train_sizes"] == [everything["stage_sizes"][0], n] and everything["k_bar"] == []
    (k_bar,) = kept["k_bar"]
    assert 1 <= k_bar <= K and kept["train_sizes"][1] <= n


def test_stage2_starts_from_stage1_weights(monkeypatch):
    starts = []
    real = labeldp.train

    def spy(model, *args, **kwargs):
        starts.append({k: v.detach().clone() for k, v in model.state_dict().items()})
        out = real(model, *args, **kwargs)
        starts.append({k: v.detach().clone() for k, v in model.state_dict().items()})
        return out

    monkeypatch.setattr(labeldp, "train", spy)
    _run_mst(_two_stage())
    begin1, end1, begin2, _ = starts
    assert all(torch.equal(end1[k], begin2[k]) for k in end1)
    assert not all(torch.equal(begin1[k], end1[k]) for k in end1)


def test_lp2st_resumes_to_the_same_result(tmp_path, monkeypatch):
    full = _run_mst(_two_stage(), epochs=2)
    path = tmp_path / "ck.pt"
    real = labeldp.train

    def die_in_stage2(model, data, test, config, *, plugins, progress, checkpoint):
        if str(checkpoint).endswith(".stage2"):
            raise Interrupted
        return real(model, data, test, config, plugins=plugins, progress=progress, checkpoint=checkpoint)

    monkeypatch.setattr(labeldp, "train", die_in_stage2)
    with pytest.raises(Interrupted):
        _run_mst(_two_stage(), checkpoint=path, epochs=2)
    monkeypatch.setattr(labeldp, "train", real)
    resumed = _run_mst(_two_stage(), checkpoint=path, epochs=2)
    assert without_wall(resumed["epochs"]) == without_wall(full["epochs"])
    assert resumed["privacy"]["ledger"] == full["privacy"]["ledger"]
    assert resumed["final"]["lp_mst"] == full["final"]["lp_mst"]


def test_mixup_and_augmentation_reach_the_training_batches():
    config = labeldp.Config(epsilon=math.inf, num_classes=K, mixup_alpha=(4.0,))
    plugin = labeldp.LabelDP(config)

    class Ctx:
        aux_gen = torch.Generator().manual_seed(0)

    x, y = _data()[0][:8], _data()[1][:8]
    (mixed,), soft = plugin.transform_batch(Ctx, (x,), y, torch.arange(8))
    assert soft.shape == (8, K) and torch.allclose(soft.sum(1), torch.ones(8))
    assert y[0] != y[-1]  # so that row 0's weight on its own label is lambda
    lam = soft[0, y[0]]
    assert torch.allclose(mixed[0], lam * x[0] + (1 - lam) * x[-1], atol=1e-6)


def test_lp_mst_records_the_previous_models_top_k_bar_test_accuracy():
    test = _data(n=40, seed=5)
    model = _model()
    out = labeldp.run(model, _data(), test, TrainConfig.non_private(epochs=1, batch_size=16, lr=0.1),
                      _two_stage(epsilon=0.5, stages=3, stage_fractions=(0.4, 0.3, 0.3), mixup_alpha=(0.0,) * 3),
                      progress=False)
    info = out["final"]["lp_mst"]
    assert len(info["test_top_k_bar_acc"]) == len(info["k_bar"]) == 2
    assert all(0.0 <= a <= 1.0 for a in info["test_top_k_bar_acc"])
    # the last entry is the stage-2 model's (the final model is stage 3's): k = K is always right
    assert labeldp._top_k_accuracy(model, test, K, TrainConfig.non_private(epochs=1, batch_size=16)) == 1.0
    top1 = labeldp._top_k_accuracy(model, test, 1, TrainConfig.non_private(epochs=1, batch_size=16))
    assert top1 == pytest.approx(out["final"]["test_acc"])


def test_jax_k_star_option_changes_k_only_and_stays_eps_dp():
    from dpnotes.mechanisms import rr_prior

    prior = torch.tensor([[0.7, 0.3]], dtype=torch.float64)  # w: Algorithm 2 (0.7, 0.731), JAX (1.107, 1)
    assert int(rr_prior.optimal_k(prior, 1.0)[0]) == 2 and int(rr_prior.jax_k(prior, 1.0)[0]) == 1
    from dpnotes.experiments.labeldp import max_log_ratio

    five = torch.tensor([[0.336, 0.312, 0.195, 0.091, 0.066]], dtype=torch.float64)  # k* 3, JAX 2
    assert int(rr_prior.optimal_k(five, 1.0)[0]) == 3 and int(rr_prior.jax_k(five, 1.0)[0]) == 2
    table = rr_prior.rr_top_k_probabilities(five[0], int(rr_prior.jax_k(five, 1.0)[0]), 1.0)
    assert max_log_ratio(table) == pytest.approx(1.0) and max_log_ratio(table) <= 1.0 + 1e-12
    # below eps = ln 2 the JAX score of m = 1 wins for a uniform prior: every label becomes class 0
    uniform = torch.full((1, 4), 0.25, dtype=torch.float64)
    assert int(rr_prior.jax_k(uniform, 0.5)[0]) == 1 and int(rr_prior.optimal_k(uniform, 0.5)[0]) == 4
    labels = torch.zeros(2000, dtype=torch.long)
    out = rr_prior.rr_with_prior(labels, prior.expand(2000, -1), 1.0, generator=torch.Generator().manual_seed(0),
                                 k_rule="jax")
    assert (out == 0).all()  # k = 1: the top label, whatever the input
    with pytest.raises(ValueError, match="k_rule"):
        rr_prior.rr_with_prior(labels, prior.expand(2000, -1), 1.0, k_rule="tf")


def test_k_star_option_is_validated_and_its_default_left_out_of_specs():
    with pytest.raises(ValueError, match="k_star"):
        labeldp.Config(epsilon=1.0, num_classes=K, mechanism="rr_prior", k_star="tf")
    with pytest.raises(ValueError, match="k_star"):
        labeldp.Config(epsilon=1.0, num_classes=K, mechanism="rr", k_star="jax")
    assert "k_star" not in labeldp.resolve({"epsilon": 1.0, "num_classes": K})
    jax = labeldp.resolve({"epsilon": 1.0, "num_classes": K, "mechanism": "rr_prior", "k_star": "jax"})
    assert jax["k_star"] == "jax"
    out = _run_mst(_two_stage(epsilon=0.5, k_star="jax"))
    assert labeldp.label_epsilon(Ledger.from_json(out["privacy"]["ledger"])) == 0.5


def test_lp3st_shares_stage_1_with_the_lp2st_of_the_same_first_fraction():
    two = _run_mst(_two_stage(stage_fractions=(0.4, 0.6)))
    three = _run_mst(_two_stage(stages=3, stage_fractions=(0.4, 0.3, 0.3), mixup_alpha=(0.0,) * 3))
    strip = lambda rs: [{k: v for k, v in r.items() if k != "wall_s"} for r in rs if r["stage"] == 1]  # noqa: E731
    assert strip(two["epochs"]) == strip(three["epochs"]) and len(strip(two["epochs"])) == 2
    assert two["final"]["lp_mst"]["stage_sizes"][0] == three["final"]["lp_mst"]["stage_sizes"][0]


def test_label_seed_fixes_the_released_labels_across_run_seeds():
    def released(seed, **kw):
        config = labeldp.Config(epsilon=1.0, num_classes=K, **kw)
        plugins = labeldp.hooks(config)
        train(_model(), _data(), None, TrainConfig.non_private(epochs=1, batch_size=16, lr=0.1, seed=seed),
              plugins=plugins, progress=False)
        return plugins[0].labels

    assert not torch.equal(released(0), released(1))  # default: each seed draws new labels
    assert torch.equal(released(0, label_seed=7), released(1, label_seed=7))

    def stage1(seed, monkeypatch_calls):
        monkeypatch_calls.clear()
        labeldp.run(_model(), _data(), None, TrainConfig.non_private(epochs=1, batch_size=16, lr=0.1, seed=seed),
                    _two_stage(label_seed=7), progress=False)
        return monkeypatch_calls[0]

    calls, real = [], labeldp.rr_with_prior

    def spy(labels, priors, epsilon, *, generator, **kw):
        out = real(labels, priors, epsilon, generator=generator, **kw)
        calls.append(out)
        return out

    labeldp.rr_with_prior = spy
    try:
        assert torch.equal(stage1(0, calls), stage1(1, calls))  # LP-MST: the split and stage 1's release
    finally:
        labeldp.rr_with_prior = real
    assert "label_seed" not in labeldp.resolve({"epsilon": 1.0, "num_classes": K})
    assert labeldp.resolve({"epsilon": 1.0, "num_classes": K, "label_seed": 3})["label_seed"] == 3
    with pytest.raises(ValueError, match="label_seed"):
        labeldp.Config(epsilon=1.0, num_classes=K, label_seed=-1)
