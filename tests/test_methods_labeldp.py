"""LabelDP (Ghazi et al., NeurIPS 2021) LP-1ST as a method module: one label release, priced under label-DP."""

import math

import numpy as np
import pytest
import torch
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
    assert "labeldp" in methods.METHODS and labeldp.VERSION == 1
    assert labeldp.resolve({"epsilon": 2.0, "num_classes": K}) == {
        "epsilon": 2.0, "num_classes": K, "mechanism": "rr", "prior": None}
    assert labeldp.resolve({"epsilon": 1.0, "num_classes": 2, "mechanism": "rr_prior", "prior": (0.25, 0.75)})["prior"] \
        == [0.25, 0.75]


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

    class Stop(Exception):
        pass

    first = labeldp.hooks(labeldp.Config(epsilon=1.0, num_classes=K))

    def die(ctx, epoch):
        if epoch == 2:
            raise Stop

    first[0].on_epoch_start = die
    with pytest.raises(Stop):
        _run(None, checkpoint=path, epochs=3, plugins=first)
    resumed, _ = _run(labeldp.Config(epsilon=1.0, num_classes=K), checkpoint=path, epochs=3)
    strip = lambda rs: [{k: v for k, v in r.items() if k != "wall_s"} for r in rs]  # noqa: E731
    assert strip(resumed["epochs"]) == strip(full["epochs"])
    assert resumed["privacy"]["ledger"] == full["privacy"]["ledger"]


@pytest.mark.parametrize("settings, name", [
    ({"epsilon": 0.0}, "epsilon"), ({"epsilon": -1.0}, "epsilon"),
    ({"num_classes": 1}, "num_classes"), ({"mechanism": "rrtopk"}, "mechanism"),
    ({"mechanism": "rr_prior", "prior": (0.5, 0.4, 0.05, 0.0)}, "prior"),
    ({"mechanism": "rr_prior", "prior": (1.2, -0.2, 0.0, 0.0)}, "prior"),
    ({"mechanism": "rr_prior", "prior": (0.5, 0.5)}, "prior"),
    ({"prior": (0.25,) * 4}, "prior"),
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
