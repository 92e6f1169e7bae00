"""DP-SGD-Decay (dpnotes.methods.dpsgd_decay): Yu et al. (2019)'s exponentially decaying noise,
the DP-SGD-Decay baseline of DPIS (Wei et al. 2022, Sec. 5.1)."""

import math

import numpy as np
import pytest
import torch
from dp_accounting import dp_event
from dp_accounting.rdp import rdp_privacy_accountant
from interrupt import Interrupted, die_at_epoch, without_wall
from toy_runs import data as _data
from toy_runs import model as _model
from toy_runs import run as _run
from toy_runs import strip as _strip

from dpnotes import methods
from dpnotes.accounting.registry import price
from dpnotes.ledger import Ledger
from dpnotes.methods import decay_schedule
from dpnotes.methods import dpsgd_decay as decay
from dpnotes.train import TrainConfig, train

CFG = TrainConfig(epochs=3, batch_size=16, lr=0.05, noise_multiplier=1.3, clip=1.0, accountants=("rdp",), seed=3)


def _plugins(rate):
    return decay.hooks(decay.Config(rate))


def test_registered_and_resolved():
    assert "dpsgd_decay" in methods.METHODS and methods.module("dpsgd_decay") is decay
    assert decay.resolve({}) == {"decay_rate": 0.01}


@pytest.mark.parametrize("bad", [-0.001, 1.5, float("nan"), "0.01"])
def test_bad_decay_rate_names_the_parameter(bad):
    with pytest.raises(ValueError, match="decay_rate"):
        decay.Config(bad)


def test_rate_zero_is_exactly_dpsgd():
    base, base_model = _run(CFG)
    zero, zero_model = _run(CFG, _plugins(0.0))
    assert all(torch.equal(p, q) for p, q in zip(base_model.parameters(), zero_model.parameters()))
    strip = lambda r: {k: v for k, v in _strip(r).items() if k != "epochs"}  # noqa: E731
    assert strip(zero) == strip(base)


def test_each_epoch_releases_at_its_decayed_sigma():
    rate = 0.3
    out, _ = _run(CFG, _plugins(rate))
    want = decay.schedule(CFG.noise_multiplier, rate, CFG.epochs)
    assert [e["noise_multiplier"] for e in out["epochs"]] == pytest.approx(want, rel=1e-12)
    ledger = Ledger.from_json(out["privacy"]["ledger"])
    sigmas = sorted({e.event.noise_multiplier for e, _ in ledger.entries}, reverse=True)
    assert sigmas == pytest.approx(want, rel=1e-12)
    steps = sum(c for _, c in ledger.entries)
    assert steps == out["final"]["steps"]
    # The run's eps is the price of decay.ledger(), which dp_accounting prices alike (integer orders).
    q, per_epoch = 16 / 80, out["final"]["steps"] // CFG.epochs
    ours = decay.ledger(CFG.noise_multiplier, rate, q, per_epoch, CFG.epochs)
    assert out["privacy"]["epsilon"]["rdp"]["epsilon"] == pytest.approx(
        price(ours, CFG.delta, "rdp")["rdp"]["epsilon"], rel=1e-12)


def _dp_accounting_eps(sigma0, rate, q, per_epoch, epochs, delta, orders):
    acc = rdp_privacy_accountant.RdpAccountant(orders=orders)
    for sigma in decay.schedule(sigma0, rate, epochs):
        acc.compose(dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(sigma)), per_epoch)
    return acc.get_epsilon(delta)


@pytest.mark.parametrize("eps, rate, b, n, epochs", [(1.0, 0.01, 512, 60000, 14), (3.0, 0.01, 512, 60000, 40),
                                                    (4.0, 0.005, 2048, 60000, 40), (2.0, 0.1, 256, 10000, 20)])
def test_initial_sigma_meets_the_budget_and_is_minimal(eps, rate, b, n, epochs):
    q, per_epoch, delta = b / n, round(n / b), 1e-5
    sigma0 = decay.initial_sigma(eps, rate, q, per_epoch, epochs, delta, accountant="dpis", digits=4)
    price_at = lambda s: price(decay.ledger(s, rate, q, per_epoch, epochs), delta, "dpis")["dpis"]["epsilon"]  # noqa: E731
    step = 10.0 ** (math.floor(math.log10(sigma0)) - 3)
    assert price_at(sigma0) <= eps < price_at(sigma0 - step)
    # An independent price of the same schedule: dp_accounting's RDP at integer orders (classic
    # conversion there; ours the improved one of Lemma 2.5, never larger).
    theirs = _dp_accounting_eps(sigma0, rate, q, per_epoch, epochs, delta, list(range(2, 257)))
    assert price_at(sigma0) <= theirs + 1e-9
    assert theirs == pytest.approx(price_at(sigma0), rel=0.05)
    # Decay spends the budget on later epochs: sigma_0 exceeds DP-SGD's constant sigma.
    from dpnotes.accounting.calibrate import noise_multiplier
    assert sigma0 > noise_multiplier(eps, q, per_epoch * epochs, delta, accountant="dpis")


def test_resume_is_exact(tmp_path):
    cfg = CFG.replace(epochs=4)
    x = _data()
    full = train(_model(), x, None, cfg, plugins=_plugins(0.2), progress=False)
    path = tmp_path / "ck.pt"

    first = _plugins(0.2)
    die_at_epoch(first[0], 2)
    with pytest.raises(Interrupted):
        train(_model(), x, None, cfg, plugins=first, progress=False, checkpoint=path)
    resumed = train(_model(), x, None, cfg, plugins=_plugins(0.2), progress=False, checkpoint=path)
    assert without_wall(resumed["epochs"]) == without_wall(full["epochs"])
    assert resumed["privacy"]["ledger"] == full["privacy"]["ledger"]
    assert np.isclose(resumed["privacy"]["epsilon"]["rdp"]["epsilon"], full["privacy"]["epsilon"]["rdp"]["epsilon"])


def test_initial_sigma_is_cached_by_its_checked_inputs():
    # the calibration lives in decay_schedule (no torch); dpsgd_decay re-exports it
    assert decay.initial_sigma is decay_schedule.initial_sigma
    decay_schedule._initial_sigma.cache_clear()
    first = decay.initial_sigma(2.0, 0.01, 0.01, 100, 5, 1e-5, accountant="rdp", digits=3)
    assert decay.initial_sigma(2, 0.01, 0.01, 100, 5, 1e-5, accountant="rdp", digits=3) == first
    info = decay_schedule._initial_sigma.cache_info()
    assert (info.hits, info.misses) == (1, 1)
    assert decay_schedule._initial_sigma.__wrapped__(2.0, 0.01, 0.01, 100, 5, 1e-5, "rdp", 3) == first
    with pytest.raises(ValueError, match="steps_per_epoch must be an integer"):
        decay.initial_sigma(2.0, 0.01, 0.01, 100.0, 5, 1e-5)
    with pytest.raises(ValueError, match="accountant must be one of"):
        decay.initial_sigma(2.0, 0.01, 0.01, 100, 5, 1e-5, accountant="moments")
