"""Keras default initialisation, for the models the GDP and DPIS papers built in Keras.

GDP (Bu et al. 2020, Sec. 5; TF Privacy research/GDP_2019) and DPIS (Wei et al. 2022, Sec. 5.1:
"we let each layer follow the default setting in Keras") train Keras layers from Keras'
defaults: Dense/Conv kernels Glorot-uniform with zero biases, Embedding uniform(-0.05, 0.05).
(LSTM defaults are set by :class:`dpnotes.models.lstm.LSTMLayer` itself.)
"""

from __future__ import annotations

from torch import nn


def keras_init(module: nn.Module) -> nn.Module:
    """Re-initialise ``module``'s Linear, Conv2d and Embedding layers as Keras would; returns it."""
    for m in module.modules():
        if isinstance(m, (nn.Linear, nn.Conv2d)):
            nn.init.xavier_uniform_(m.weight)
            if m.bias is not None:
                nn.init.zeros_(m.bias)
        elif isinstance(m, nn.Embedding):
            nn.init.uniform_(m.weight, -0.05, 0.05)
    return module
