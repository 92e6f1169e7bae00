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

* ``tf-text-rnn`` (the non-private LSTM-RNN baseline of GDP's Table 3, Bu et al. 2020 Sec. 4.1
  "IMDb", ref. [1]: TensorFlow's "Text classification with an RNN" tutorial, its two-layer
  model): Embedding(vocab, 64) -> Bidirectional LSTM(64, all steps) -> Bidirectional LSTM(32)
  -> Dense(64, ReLU) -> Dropout(0.5) -> Dense(2). The tutorial masks padding (Embedding
  ``mask_zero=True``); we pack each sequence to its tokens. Its tokeniser (a subword or
  1,000-word encoder, by tutorial version) is not available offline: we feed the paper's
  Table 3 preprocessing (top 10,000 words, 256 tokens). Two logits with softmax instead of one
  with a sigmoid: the same model family.

All three were built in Keras, so they start from Keras' default initialisation.
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


class StackedBiLSTMClassifier(nn.Module):
    """Embedding -> BiLSTM(64, sequences) -> BiLSTM(32) -> Dense(64, ReLU) -> Dropout -> Dense
    (TF text-RNN tutorial, two-layer model). Non-private: ``nn.LSTM``'s fused kernel, padding
    (token 0, on either side) skipped by packing each sequence to its tokens."""

    def __init__(self, vocab_size: int, embed_dim: int = 64, hidden: tuple[int, int] = (64, 32),
                 dense: int = 64, dropout: float = 0.5, num_classes: int = 2):
        super().__init__()
        self.embedding = nn.Embedding(validate.integer("vocab_size", vocab_size, minimum=2),
                                      validate.integer("embed_dim", embed_dim, minimum=1))
        self.lstm1 = nn.LSTM(embed_dim, hidden[0], batch_first=True, bidirectional=True)
        self.lstm2 = nn.LSTM(2 * hidden[0], hidden[1], batch_first=True, bidirectional=True)
        self.classifier = nn.Sequential(nn.Linear(2 * hidden[1], dense), nn.ReLU(), nn.Dropout(dropout),
                                        nn.Linear(dense, num_classes))
        for lstm in (self.lstm1, self.lstm2):  # Keras LSTM defaults (see dpnotes.models.lstm)
            for name, w in lstm.named_parameters():
                if name.startswith("weight_ih"):
                    for block in w.chunk(4):
                        nn.init.xavier_uniform_(block)
                elif name.startswith("weight_hh"):
                    for block in w.chunk(4):
                        nn.init.orthogonal_(block)
                else:  # b_ih and b_hh: zero, forget gate (gate order i, f, g, o) 1 in total
                    nn.init.zeros_(w)
                    if name.startswith("bias_ih"):
                        w.data[lstm.hidden_size:2 * lstm.hidden_size] = 1.0

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        from torch.nn.utils.rnn import pack_padded_sequence

        lengths = (tokens != 0).sum(1).clamp(min=1)
        # move each sequence's tokens to its start (pre- or post-padded alike), then pack
        order = torch.argsort((tokens == 0).to(torch.int8), dim=1, stable=True)
        packed = pack_padded_sequence(self.embedding(tokens.gather(1, order)), lengths.cpu(),
                                      batch_first=True, enforce_sorted=False)
        out, _ = self.lstm1(packed)
        _, (h, _) = self.lstm2(out)
        return self.classifier(torch.cat([h[0], h[1]], dim=1))  # forward and backward final states


def _tokens_spec(name, source, seq_len, vocab_size):
    seq_len = validate.integer("seq_len", seq_len, minimum=1)
    return ModelSpec(name=name, source=source, input_kind="tokens", input_shape=(seq_len,),
                     input_dtype=torch.int64, num_outputs=2, index_bounds=(vocab_size,))


_GDP = ("GDP (Bu et al. 2020) Sec. 5 'IMDb'; TF Privacy research/GDP_2019 (REFERENCE.md 'GDP'): "
        "Embedding(10000, 16), unmasked mean over 256 positions, Dense(16, ReLU), Dense(2)")
_TF_RNN = ("GDP (Bu et al. 2020) Sec. 4.1 'IMDb', Table 3 'LSTM-RNN', ref. [1]: TensorFlow's text "
           "classification RNN tutorial, two-layer model: Embedding 64, BiLSTM 64, BiLSTM 32, Dense 64 "
           "ReLU, Dropout 0.5, Dense 2; padding masked")
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


# Packed sequences through nn.LSTM's fused kernel: no per-example gradients (trained without DP).
@register("tf-text-rnn", lambda vocab_size=10000, seq_len=256:
          _tokens_spec("tf-text-rnn", _TF_RNN, seq_len, vocab_size), per_example=False)
def tf_text_rnn(vocab_size: int = 10000, seq_len: int = 256) -> nn.Module:
    """``seq_len`` only describes the inputs (the model takes any length; padding is skipped)."""
    validate.integer("seq_len", seq_len, minimum=1)
    model = StackedBiLSTMClassifier(vocab_size)
    keras_init(model.embedding)
    keras_init(model.classifier)
    return model
