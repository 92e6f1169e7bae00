"""GDP's simplified neural collaborative filtering model for MovieLens-1M.

Bu et al. 2020, Sec. 5 "MovieLens": "a simplified version of the neural collaborative
filtering in [He et al. 2017]": a GMF branch (user embedding * item embedding, 5 latent
factors) and an MLP branch (user and item embeddings concatenated, 10 latent factors), the two
concatenated and fed to one fully connected output layer. The paper calls it a multi-class
problem scored by RMSE; its code (TF Privacy research/GDP_2019, read for facts) has 5 logits
trained with softmax cross-entropy on labels rating - 1, and scores the RMSE of the expected
rating under the softmax: :func:`expected_rating`. Built in Keras: Keras default init.
"""

from __future__ import annotations

import torch
from torch import nn

from dpnotes import validate
from dpnotes.models.keras_init import keras_init
from dpnotes.models.registry import ModelSpec, register


class NeuMF(nn.Module):
    """Input: ``(batch, 2)`` int64 pairs (user id, item id), ids from 0; output: class logits."""

    def __init__(self, num_users: int = 6040, num_items: int = 3706, mf_dim: int = 5,
                 mlp_dim: int = 10, num_classes: int = 5):
        super().__init__()
        num_users = validate.integer("num_users", num_users, minimum=1)
        num_items = validate.integer("num_items", num_items, minimum=1)
        mf_dim = validate.integer("mf_dim", mf_dim, minimum=1)
        mlp_dim = validate.integer("mlp_dim", mlp_dim, minimum=1)
        num_classes = validate.integer("num_classes", num_classes, minimum=2)
        self.mf_user = nn.Embedding(num_users, mf_dim)
        self.mf_item = nn.Embedding(num_items, mf_dim)
        self.mlp_user = nn.Embedding(num_users, mlp_dim)
        self.mlp_item = nn.Embedding(num_items, mlp_dim)
        self.output_layer = nn.Linear(mf_dim + 2 * mlp_dim, num_classes)

    def forward(self, pairs: torch.Tensor) -> torch.Tensor:
        user, item = pairs[..., 0], pairs[..., 1]
        gmf = self.mf_user(user) * self.mf_item(item)
        mlp = torch.cat([self.mlp_user(user), self.mlp_item(item)], dim=-1)
        return self.output_layer(torch.cat([gmf, mlp], dim=-1))


def expected_rating(logits: torch.Tensor) -> torch.Tensor:
    """Softmax-expected rating on the scale 1..K from ``(batch, K)`` logits (class k is rating
    k + 1); the GDP code's RMSE is computed on this."""
    if logits.dim() != 2 or logits.shape[1] < 2:
        raise ValueError(f"logits must have shape (batch, K >= 2), got {tuple(logits.shape)}")
    ratings = torch.arange(1, logits.shape[1] + 1, dtype=logits.dtype, device=logits.device)
    return torch.softmax(logits, dim=1) @ ratings


_SOURCE = ("GDP (Bu et al. 2020) Sec. 5 'MovieLens' (GMF 5 factors, MLP branch 10 factors, one "
           "output layer); 5 rating classes as in TF Privacy research/GDP_2019 (REFERENCE.md 'GDP')")


@register("neumf", lambda num_users=6040, num_items=3706: ModelSpec(
    name="neumf", source=_SOURCE, input_kind="pairs", input_shape=(2,), input_dtype=torch.int64,
    num_outputs=5, index_bounds=(num_users, num_items)))
def neumf(num_users: int = 6040, num_items: int = 3706) -> nn.Module:
    return keras_init(NeuMF(num_users, num_items))
