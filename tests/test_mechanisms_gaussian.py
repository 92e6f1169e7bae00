"""The Gaussian mechanism: noise law (KS test, false-alarm rate 1e-4), shapes, seeding, input checks."""

import pytest
import torch
from scipy.stats import kstest

from dpnotes.mechanisms import gaussian_mechanism

ALPHA = 1e-4


@pytest.mark.statistical
@pytest.mark.parametrize("sigma, sensitivity", [(1.0, 1.0), (0.7, 3.0), (5.0, 0.1)])
def test_noise_is_normal_with_std_sigma_times_sensitivity(sigma, sensitivity):
    value = torch.linspace(-2, 2, 50_000, dtype=torch.float64)
    out = gaussian_mechanism(value, sigma, sensitivity, generator=torch.Generator().manual_seed(0))
    z = ((out - value) / (sigma * sensitivity)).numpy()
    assert kstest(z, "norm").pvalue > ALPHA


def test_shape_dtype_and_seed():
    value = torch.zeros(3, 4, dtype=torch.float32)
    a = gaussian_mechanism(value, 1.0, generator=torch.Generator().manual_seed(5))
    b = gaussian_mechanism(value, 1.0, generator=torch.Generator().manual_seed(5))
    assert a.shape == value.shape and a.dtype == torch.float32
    assert torch.equal(a, b) and not torch.equal(a, value)


@pytest.mark.parametrize("sigma, sensitivity, name", [
    (0.0, 1.0, "sigma"), (-1.0, 1.0, "sigma"), (float("inf"), 1.0, "sigma"),
    (1.0, 0.0, "sensitivity"), (1.0, float("nan"), "sensitivity"),
])
def test_invalid_parameters(sigma, sensitivity, name):
    with pytest.raises(ValueError, match=name):
        gaussian_mechanism(torch.zeros(2), sigma, sensitivity)


def test_integer_tensor_rejected():
    with pytest.raises(ValueError, match="value"):
        gaussian_mechanism(torch.zeros(2, dtype=torch.long), 1.0)
