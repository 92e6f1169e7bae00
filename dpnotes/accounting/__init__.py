"""Privacy accountants for DP-SGD-style training (Poisson-subsampled Gaussian)."""

from dpnotes.accounting.rdp import (
    ORDERS,
    rdp_epsilon,
    rdp_to_epsilon,
    resolve_orders,
    subsampled_gaussian_rdp,
)

__all__ = ["ORDERS", "rdp_epsilon", "rdp_to_epsilon", "resolve_orders", "subsampled_gaussian_rdp"]
