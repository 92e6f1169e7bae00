"""An LSTM layer written from matmuls, so that ``torch.func.vmap`` can take per-sample
gradients through it (``nn.LSTM`` calls a fused kernel that vmap cannot batch).

Vectorised over the batch; the loop runs over time steps only. Keras defaults (the DPIS
model is built in Keras, DPIS Sec. 5.1): gates i, f, g, o with sigmoid/tanh, input kernel
Glorot-uniform, recurrent kernel orthogonal, bias zero except the forget gate's, which is 1
(``unit_forget_bias``).
"""

from __future__ import annotations

import torch
from torch import nn

from dpnotes import validate


class LSTMLayer(nn.Module):
    """One direction of an LSTM over ``(batch, time, features)``; returns the last hidden state
    ``(batch, hidden_size)`` (Keras ``return_sequences=False``). ``reverse=True`` reads the
    sequence from its end (the backward half of a bidirectional layer)."""

    def __init__(self, input_size: int, hidden_size: int):
        super().__init__()
        self.input_size = validate.integer("input_size", input_size, minimum=1)
        self.hidden_size = validate.integer("hidden_size", hidden_size, minimum=1)
        self.input_map = nn.Linear(input_size, 4 * hidden_size)
        self.recurrent_map = nn.Linear(hidden_size, 4 * hidden_size, bias=False)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        h = self.hidden_size
        nn.init.xavier_uniform_(self.input_map.weight)
        nn.init.orthogonal_(self.recurrent_map.weight)
        with torch.no_grad():
            self.input_map.bias.zero_()
            self.input_map.bias[h:2 * h] = 1.0

    def forward(self, x: torch.Tensor, reverse: bool = False) -> torch.Tensor:
        gates_in = self.input_map(x)  # every time step at once
        h = x.new_zeros(x.shape[0], self.hidden_size)
        c = torch.zeros_like(h)
        steps = range(x.shape[1] - 1, -1, -1) if reverse else range(x.shape[1])
        for t in steps:
            i, f, g, o = (gates_in[:, t] + self.recurrent_map(h)).chunk(4, dim=-1)
            c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
            h = torch.sigmoid(o) * torch.tanh(c)
        return h


class BiLSTM(nn.Module):
    """Keras ``Bidirectional(LSTM(hidden_size))``: forward and backward final states, concatenated
    to ``(batch, 2 * hidden_size)``."""

    def __init__(self, input_size: int, hidden_size: int):
        super().__init__()
        self.forward_layer = LSTMLayer(input_size, hidden_size)
        self.backward_layer = LSTMLayer(input_size, hidden_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat([self.forward_layer(x), self.backward_layer(x, reverse=True)], dim=-1)
