"""Text classifiers on IMDb token ids.

* ``gdp-imdb`` (Bu et al. 2020, Sec. 5 "IMDb"; TF Privacy research/GDP_2019, REFERENCE.md
  "GDP"): Embedding(10000, 16) -> GlobalAveragePooling1D -> Dense(16, ReLU) -> Dense(2), on
  sequences padded/truncated to 256. Padding is NOT masked: Keras' Embedding defaults to
  ``mask_zero=False``, so GlobalAveragePooling1D averages over all 256 positions, padding
  (id 0) included; we do the same.
* ``dpis-imdb-bilstm`` (Wei et al. 2022, Sec. 5.1 "IMDb" and Table 1): Embedding(20000, 100)
  (GloVe, frozen) -> Dense(32, act) -> Bidirectional LSTM(32) -> Dense(16, act) -> Dense(2), on
  sequences padded to 80; act = ReLU (DP-SGD, DPIS, DP-SGD-Decay) or tanh (DP-SGD-TS). Loading
  the GloVe vectors is the data layer's job: copy them into ``model.embedding.weight``.

Both were built in Keras, so they start from Keras' default initialisation.
"""

from __future__ import annotations

import torch
from torch import nn

from dpnotes import validate
from dpnotes.models.cnn import make_activation
from dpnotes.models.keras_init import keras_init
from dpnotes.models.lstm import BiLSTM
from dpnotes.models.registry import ModelSpec, register


class MeanEmbeddingClassifier(nn.Module):
    """Embedding -> mean over all positions -> Linear-ReLU -> Linear."""

    def __init__(self, vocab_size: int, embed_dim: int, hidden: int, num_classes: int):
        super().__init__()
        self.embedding = nn.Embedding(validate.integer("vocab_size", vocab_size, minimum=2),
                                      validate.integer("embed_dim", embed_dim, minimum=1))
        self.classifier = nn.Sequential(nn.Linear(embed_dim, hidden), nn.ReLU(),
                                        nn.Linear(hidden, num_classes))

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.embedding(tokens).mean(dim=1))


class EmbeddingBiLSTMClassifier(nn.Module):
    """Embedding -> per-token Linear-act -> BiLSTM -> Linear-act -> Linear (DPIS Table 1)."""

    def __init__(self, vocab_size: int = 20000, embed_dim: int = 100, activation: str = "relu",
                 freeze_embedding: bool = True, num_classes: int = 2):
        super().__init__()
        self.embedding = nn.Embedding(validate.integer("vocab_size", vocab_size, minimum=2),
                                      validate.integer("embed_dim", embed_dim, minimum=1))
        self.embedding.weight.requires_grad_(not freeze_embedding)
        self.project = nn.Sequential(nn.Linear(embed_dim, 32), make_activation(activation))
        self.bilstm = BiLSTM(32, 32)
        self.classifier = nn.Sequential(nn.Linear(64, 16), make_activation(activation),
                                        nn.Linear(16, num_classes))

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.bilstm(self.project(self.embedding(tokens))))


def _tokens_spec(name, source, seq_len, vocab_size):
    seq_len = validate.integer("seq_len", seq_len, minimum=1)
    return ModelSpec(name=name, source=source, input_kind="tokens", input_shape=(seq_len,),
                     input_dtype=torch.int64, num_outputs=2, index_bounds=(vocab_size,))


_GDP = ("GDP (Bu et al. 2020) Sec. 5 'IMDb'; TF Privacy research/GDP_2019 (REFERENCE.md 'GDP'): "
        "Embedding(10000, 16), unmasked mean over 256 positions, Dense(16, ReLU), Dense(2)")
_DPIS = ("DPIS (Wei et al. 2022) Sec. 5.1 'IMDb', Table 1 'RNN model for IMDb': Embedding 100 "
         "(GloVe, frozen), FC 32, BiLSTM 32, FC 16, FC 2; sequences of 80 tokens")


@register("gdp-imdb", lambda vocab_size=10000, seq_len=256:
          _tokens_spec("gdp-imdb", _GDP, seq_len, vocab_size))
def gdp_imdb(vocab_size: int = 10000, seq_len: int = 256) -> nn.Module:
    """``seq_len`` only describes the inputs (the model takes any length)."""
    validate.integer("seq_len", seq_len, minimum=1)
    return keras_init(MeanEmbeddingClassifier(vocab_size, 16, 16, 2))


@register("dpis-imdb-bilstm",
          lambda vocab_size=20000, seq_len=80, activation="relu", freeze_embedding=True:
          _tokens_spec("dpis-imdb-bilstm", _DPIS, seq_len, vocab_size))
def dpis_imdb_bilstm(vocab_size: int = 20000, seq_len: int = 80, activation: str = "relu",
                     freeze_embedding: bool = True) -> nn.Module:
    """``seq_len`` only describes the inputs (the model takes any length). The embedding is
    frozen (``requires_grad=False``) unless ``freeze_embedding=False``."""
    validate.integer("seq_len", seq_len, minimum=1)
    validate.choice("freeze_embedding", freeze_embedding, (True, False))
    model = EmbeddingBiLSTMClassifier(vocab_size, 100, activation, freeze_embedding)
    keras_init(model.embedding)
    keras_init(model.project)
    keras_init(model.classifier)
    return model
