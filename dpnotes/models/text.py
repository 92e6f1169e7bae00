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


def _keras_lstm_init(lstm: nn.LSTM) -> None:
    """Keras LSTM defaults (see :mod:`dpnotes.models.lstm`): input kernel Glorot-uniform and
    recurrent kernel orthogonal per gate, biases zero except the forget gate's (gate order i, f,
    g, o), which is 1 in total."""
    for name, w in lstm.named_parameters():
        if name.startswith("weight_ih"):
            for block in w.chunk(4):
                nn.init.xavier_uniform_(block)
        elif name.startswith("weight_hh"):
            for block in w.chunk(4):
                nn.init.orthogonal_(block)
        else:
            nn.init.zeros_(w)
            if name.startswith("bias_ih"):
                w.data[lstm.hidden_size:2 * lstm.hidden_size] = 1.0


class MaskedBiLSTM(nn.Module):
    """Bidirectional LSTM over left-aligned sequences of different lengths, padding skipped
    (Keras ``mask_zero=True``). Two unidirectional ``nn.LSTM`` runs on unpacked tensors (CPU:
    the fused oneDNN kernel, about 5x faster than packed sequences here): the forward one on the
    sequences as they are, the backward one on each sequence reversed within its length. An
    output at position t < length reads only positions <= t of its run, so the padding after
    a sequence never reaches a valid output; outputs at padded positions are meaningless."""

    def __init__(self, input_size: int, hidden_size: int):
        super().__init__()
        self.hidden_size = hidden_size
        self.forward_lstm = nn.LSTM(input_size, hidden_size, batch_first=True)
        self.backward_lstm = nn.LSTM(input_size, hidden_size, batch_first=True)
        for lstm in (self.forward_lstm, self.backward_lstm):
            _keras_lstm_init(lstm)

    def forward(self, x: torch.Tensor, reverse: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``x`` (batch, time, features); ``reverse`` (batch, time) the index that reverses each
        sequence within its length (an involution). Returns the outputs of both directions,
        aligned with ``x``, and the runs' outputs in their own reading order (the last valid one
        of each is the direction's final state)."""
        index = reverse.unsqueeze(-1)
        fwd, _ = self.forward_lstm(x)
        bwd_read, _ = self.backward_lstm(x.gather(1, index.expand(-1, -1, x.shape[-1])))
        bwd = bwd_read.gather(1, index.expand(-1, -1, self.hidden_size))
        return torch.cat([fwd, bwd], dim=-1), torch.cat([fwd, bwd_read], dim=-1)


class StackedBiLSTMClassifier(nn.Module):
    """Embedding -> BiLSTM(64, sequences) -> BiLSTM(32) -> Dense(64, ReLU) -> Dropout -> Dense
    (TF text-RNN tutorial, two-layer model). Non-private (fused kernels, no per-example
    gradients); padding (token 0, on either side) skipped: each sequence's tokens are moved to
    its start and read by :class:`MaskedBiLSTM`."""

    def __init__(self, vocab_size: int, embed_dim: int = 64, hidden: tuple[int, int] = (64, 32),
                 dense: int = 64, dropout: float = 0.5, num_classes: int = 2):
        super().__init__()
        self.embedding = nn.Embedding(validate.integer("vocab_size", vocab_size, minimum=2),
                                      validate.integer("embed_dim", embed_dim, minimum=1))
        self.lstm1 = MaskedBiLSTM(embed_dim, hidden[0])
        self.lstm2 = MaskedBiLSTM(2 * hidden[0], hidden[1])
        self.classifier = nn.Sequential(nn.Linear(2 * hidden[1], dense), nn.ReLU(), nn.Dropout(dropout),
                                        nn.Linear(dense, num_classes))

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        lengths = (tokens != 0).sum(1).clamp(min=1)
        # move each sequence's tokens to its start (pre- or post-padded alike)
        order = torch.argsort((tokens == 0).to(torch.int8), dim=1, stable=True)
        steps = torch.arange(tokens.shape[1], device=tokens.device).expand_as(tokens)
        reverse = torch.where(steps < lengths[:, None], lengths[:, None] - 1 - steps, steps)
        out, _ = self.lstm1(self.embedding(tokens.gather(1, order)), reverse)
        _, read = self.lstm2(out, reverse)
        last = (lengths - 1).view(-1, 1, 1).expand(-1, 1, read.shape[-1])
        return self.classifier(read.gather(1, last).squeeze(1))  # both directions' final states


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


# nn.LSTM's fused kernel: no per-example gradients (trained without DP).
@register("tf-text-rnn", lambda vocab_size=10000, seq_len=256:
          _tokens_spec("tf-text-rnn", _TF_RNN, seq_len, vocab_size), per_example=False,
          version=2)  # 2: MaskedBiLSTM (unpacked fused kernel) instead of packed sequences
def tf_text_rnn(vocab_size: int = 10000, seq_len: int = 256) -> nn.Module:
    """``seq_len`` only describes the inputs (the model takes any length; padding is skipped)."""
    validate.integer("seq_len", seq_len, minimum=1)
    model = StackedBiLSTMClassifier(vocab_size)
    keras_init(model.embedding)
    keras_init(model.classifier)
    return model
