"""Test RMSE of a rating classifier (Bu et al. 2020, Sec. 4.1 "MovieLens": the paper's code
scores the softmax-expected rating), and a plug-in that adds it to every epoch's history;
used by GDP's Table 4 runs and LabelDP's MovieLens runs."""

from __future__ import annotations

import torch

from dpnotes.train.plugins import Plugin


def rmse(model, pairs: torch.Tensor, labels: torch.Tensor) -> float:
    """RMSE of the softmax-expected rating (the paper's code) against the true rating."""
    from dpnotes.models.recsys import expected_rating

    was = model.training
    model.eval()
    with torch.no_grad():
        pred = torch.cat([expected_rating(model(pairs[s:s + 8192])) for s in range(0, len(pairs), 8192)])
    model.train(was)
    return float(torch.sqrt(((pred - (labels.to(pred) + 1)) ** 2).mean()))


class RatingRMSE(Plugin):
    """Adds the test RMSE of the expected rating to every epoch of the history."""

    name = "test-rmse"

    def __init__(self, test_pairs: torch.Tensor, test_labels: torch.Tensor):
        self.test_pairs, self.test_labels = test_pairs, test_labels

    def on_epoch_end(self, ctx, record):
        return {"test_rmse": rmse(ctx.model, self.test_pairs.to(ctx.device), self.test_labels.to(ctx.device))}


def rmse_plugin(test_pairs: torch.Tensor, test_labels: torch.Tensor) -> RatingRMSE:
    """The :class:`RatingRMSE` plug-in of a test set."""
    return RatingRMSE(test_pairs, test_labels)
