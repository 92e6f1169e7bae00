"""The CUDA path: everything the CPU suite checks about a private step, checked again on a GPU.

Skipped where torch sees no CUDA device (CI). Where it does: ghost norms and clipped sums
equal torch.func's on the GPU for every registered model, a CUDA run spends exactly the privacy
of the same CPU run (batches are drawn on the CPU, so the ledgers are identical), the noise on
the GPU has the std the accountants price, a CUDA run resumes bit-exactly, and every paper's
smoke profile trains on CUDA with the ledger of its CPU run.
"""

import math

import pytest
import torch
from interrupt import Interrupted, StopAtEpoch
from scipy import stats
from toy_runs import data as _data
from toy_runs import model as _model
from toy_runs import run as _run
from toy_runs import strip as _strip

from dpnotes import data, executors, models, runner
from dpnotes.results import Store
from dpnotes.train import TrainConfig, build_context, private_step, train
from dpnotes.train.ghost import GhostGrads
from dpnotes.train.grads import FuncGrads, grad_norms, per_example_loss, trainable
from dpnotes.train.plugins import Plugin

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")

CE = per_example_loss("cross_entropy")
HEAVY = {"resnet18v2", "sadpsgd-cifar-cnn", "papernot-cifar-cnn", "dpis-imdb-bilstm"}
PER_EXAMPLE = [pytest.param(n, marks=[pytest.mark.slow] if n in HEAVY else [])
               for n in models.names(per_example=True)]


@pytest.mark.parametrize("name", PER_EXAMPLE)
def test_ghost_norms_on_cuda_equal_func_and_cpu(name):
    """Per-example norms in float64 on the GPU: ghost = torch.func there, and both = the CPU's."""
    x, y = models.example_batch(name, 4, generator=torch.Generator().manual_seed(2))
    torch.manual_seed(2)
    model = models.create(name).double()
    if any(isinstance(m, torch.nn.modules.batchnorm._BatchNorm) for m in model.modules()):
        model.eval()
    x = x.double() if x.is_floating_point() else x
    cpu, _, _ = FuncGrads(model, CE)(trainable(model), (x,), y)
    model = model.cuda()
    xc, yc = x.cuda(), y.cuda()
    dense, _, _ = FuncGrads(model, CE)(trainable(model), (xc,), yc)
    ghost = GhostGrads(model, CE)
    try:
        factored, _, _ = ghost(trainable(model), (xc,), yc)
    finally:
        ghost.close()
    want = grad_norms(cpu)
    for got in (grad_norms(dense), grad_norms(factored)):
        assert got.device.type == "cuda"
        torch.testing.assert_close(got.cpu(), want, rtol=1e-7, atol=1e-12)


@pytest.mark.parametrize("name", PER_EXAMPLE)
def test_every_registered_model_trains_on_cuda_with_the_cpu_ledger(name):
    x, y = models.example_batch(name, 16, generator=torch.Generator().manual_seed(0))
    kwargs = {"norm": "group"} if name == "resnet18v2" else {}
    out = {}
    for device in ("cpu", "cuda"):
        torch.manual_seed(0)
        cfg = TrainConfig(epochs=1, batch_size=8, accountants=("rdp",), device=device)
        out[device] = train(models.create(name, **kwargs), (x, y), (x, y), cfg, progress=False)
    assert math.isfinite(out["cuda"]["final"]["test_loss"])
    assert out["cuda"]["privacy"] == out["cpu"]["privacy"]  # ledger and eps, exactly


def test_empty_batch_noise_on_cuda_has_std_sigma_c_over_qn():
    """With no example in the batch the update is the noise alone: std sigma C / (q N)."""
    x, y = _data()
    sigma, clip, lr = 1.3, 0.7, 1.0
    cfg = TrainConfig(batch_size=12, lr=lr, noise_multiplier=sigma, clip=clip, accountants=(), device="cuda")
    ctx = build_context(_model(), (x, y), None, cfg)
    before = [p.detach().clone() for p in ctx.model.parameters()]
    private_step(ctx, torch.empty(0, dtype=torch.long, device="cuda"))
    v = torch.cat([(b - p.detach()).flatten() for b, p in zip(before, ctx.model.parameters())]).double().cpu()
    std = lr * sigma * clip / 12
    assert abs(v.mean().item()) < 5 * std / math.sqrt(len(v))
    stat = (len(v) - 1) * v.var().item() / std ** 2
    assert 2 * min(stats.chi2.cdf(stat, len(v) - 1), stats.chi2.sf(stat, len(v) - 1)) > 1e-3


def test_cuda_run_is_deterministic_and_resumes_bit_exactly(tmp_path):
    cfg = TrainConfig(epochs=3, batch_size=20, lr=0.3, optimizer="adam", noise_multiplier=0.8,
                      accountants=("rdp",), seed=2, device="cuda")
    full, _ = _run(cfg)
    assert _strip(_run(cfg)[0]) == _strip(full)

    path = tmp_path / "partial.pt"
    with pytest.raises(Interrupted):
        _run(cfg, plugins=[StopAtEpoch(2)], checkpoint=path)
    assert _strip(_run(cfg, plugins=[Plugin()], checkpoint=path, model_seed=9)[0]) == _strip(full)


@pytest.mark.parametrize("paper", ["dplis", "dpis", "gdp", "labeldp", "sadpsgd", "audit"])
def test_smoke_profile_on_cuda_spends_the_cpu_runs_privacy(paper, tmp_path):
    """Every smoke config whose data is in the mirror (the lent GPU carries a few datasets),
    on CPU and on CUDA: same ids, the CUDA run's device recorded, ledger and eps identical."""
    local = {r.dataset for r in data.verify() if r.ok}
    specs = [s for s in runner.specs(paper, "smoke") if s.dataset is None or _registry_name(s.dataset) in local]
    if not specs:
        pytest.skip(f"no smoke config of {paper} has its data in the mirror")
    got = {}
    for device in ("cpu", "cuda"):
        store = Store(tmp_path / device)
        got[device] = list(executors.create("local").run(specs, device=device, store=store, progress=False))
    assert [r["id"] for r in got["cuda"]] == [r["id"] for r in got["cpu"]]
    for a, b in zip(got["cuda"], got["cpu"]):
        assert a["provenance"]["segments"][0]["device"].startswith("cuda")
        assert a["privacy"]["ledger"] == b["privacy"]["ledger"], a["spec"]["experiment"]
        assert a["privacy"].get("epsilon") == b["privacy"].get("epsilon"), a["spec"]["experiment"]


def _registry_name(dataset: str) -> str:
    return {"fashion_mnist": "fashion-mnist", "cifar10": "cifar-10"}.get(dataset, dataset)


def test_dplis_draws_where_the_parameters_live_and_resumes_bit_exactly(tmp_path):
    from dpnotes.methods import dplis

    def smoothing():
        return dplis.hooks(dplis.Config(K=2, R=20.0))[0]

    cfg = TrainConfig(epochs=3, batch_size=16, lr=0.05, normalize="none", noise_multiplier=1.1, clip=1.0,
                      accountants=("rdp",), seed=3, device="cuda")
    plugin = smoothing()
    full, _ = _run(cfg, [plugin])
    assert plugin.generator.device.type == "cuda"  # no host draw copied to the GPU every step

    path = tmp_path / "run.pt"
    with pytest.raises(Interrupted):
        _run(cfg, [smoothing(), StopAtEpoch(2)], checkpoint=path)
    assert _strip(_run(cfg, [smoothing(), Plugin()], checkpoint=path, model_seed=9)[0]) == _strip(full)
