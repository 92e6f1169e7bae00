"""Poisson and shuffled batch sampling."""

import numpy as np
import pytest
import torch
from scipy import stats

from dpnotes.train.sampling import poisson_batch, shuffled_batches, to_device

ALPHA = 1e-3  # false-alarm rate of each statistical test below


@pytest.mark.statistical
def test_poisson_batch_sizes_are_binomial():
    """Chi-square goodness of fit of 4000 batch sizes to Binomial(N, q); false alarm 1e-3."""
    n, q, draws = 500, 0.05, 4000
    g = torch.Generator().manual_seed(1)
    sizes = np.array([len(poisson_batch(q, n, g)) for _ in range(draws)])
    dist = stats.binom(n, q)
    # bins with expected count >= 5: merge both tails
    lo, hi = int(dist.ppf(0.005)), int(dist.ppf(0.995))
    edges = np.arange(lo, hi + 1)
    observed = [np.sum(sizes < lo)] + [np.sum(sizes == k) for k in edges] + [np.sum(sizes > hi)]
    probs = [dist.cdf(lo - 1)] + [dist.pmf(k) for k in edges] + [dist.sf(hi)]
    expected = draws * np.array(probs)
    chi2 = ((np.array(observed) - expected) ** 2 / expected).sum()
    assert stats.chi2.sf(chi2, len(observed) - 1) > ALPHA


@pytest.mark.statistical
def test_per_example_probabilities_are_respected():
    """Each example's inclusion count is Binomial(draws, p_i); Bonferroni over 50 examples."""
    n, draws = 50, 4000
    p = torch.linspace(0.0, 1.0, n)
    g = torch.Generator().manual_seed(2)
    counts = torch.zeros(n)
    for _ in range(draws):
        counts[poisson_batch(p, n, g)] += 1
    assert counts[0] == 0 and counts[-1] == draws
    pvals = [stats.binomtest(int(c), draws, float(pi)).pvalue for c, pi in zip(counts[1:-1], p[1:-1])]
    assert min(pvals) > ALPHA / (n - 2)


def test_poisson_batch_is_sorted_unique_and_can_be_empty():
    g = torch.Generator().manual_seed(0)
    idx = poisson_batch(0.5, 100, g)
    assert idx.dtype == torch.int64 and torch.equal(idx, torch.unique(idx))
    assert len(poisson_batch(1e-12, 100, g)) == 0
    assert len(poisson_batch(1.0, 100, g)) == 100


def test_poisson_batch_same_seed_same_batch():
    a = poisson_batch(0.3, 1000, torch.Generator().manual_seed(5))
    b = poisson_batch(0.3, 1000, torch.Generator().manual_seed(5))
    assert torch.equal(a, b)


def test_poisson_batch_invalid():
    g = torch.Generator()
    with pytest.raises(ValueError, match="q"):
        poisson_batch(0.0, 10, g)
    with pytest.raises(ValueError, match="q"):
        poisson_batch(1.5, 10, g)
    with pytest.raises(ValueError, match="probs"):
        poisson_batch(torch.full((9,), 0.5), 10, g)
    with pytest.raises(ValueError, match="probs"):
        poisson_batch(torch.full((10,), 1.5), 10, g)
    with pytest.raises(ValueError, match="n"):
        poisson_batch(0.5, 0, g)


def test_shuffled_batches_are_disjoint_fixed_size():
    b = shuffled_batches(103, 10, 10, torch.Generator().manual_seed(0))
    assert b.shape == (10, 10)
    assert len(torch.unique(b)) == 100 and int(b.max()) < 103
    with pytest.raises(ValueError, match="exceeds"):
        shuffled_batches(99, 10, 10, torch.Generator())


def test_to_device_on_the_cpu_is_plain_to():
    idx = torch.tensor([0, 3, 5])
    assert to_device(idx, "cpu") is idx
    assert torch.equal(to_device(idx, torch.device("cpu")), idx)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_to_device_to_cuda_does_not_wait_for_the_gpu():
    idx = torch.arange(0, 1000, 7)
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")  # a synchronising copy raises
    try:
        moved = to_device(idx, "cuda")
    finally:
        torch.cuda.set_sync_debug_mode(0)
    assert moved.device.type == "cuda" and torch.equal(moved.cpu(), idx)
