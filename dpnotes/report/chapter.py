"""What every chapter notebook sets up before its first table: display options, seeds, style."""

from __future__ import annotations


def setup(seed: int) -> None:
    """pandas prints whole frames, numpy and torch are seeded with ``seed`` (the notebook's own
    randomness; each run's config carries its own seed), the book's matplotlib style is set, and
    tqdm's warning that it falls back to text bars (no ipywidgets) is silenced."""
    import warnings

    import numpy as np
    import pandas as pd
    import torch
    from tqdm import TqdmWarning

    from dpnotes.report import tables

    warnings.simplefilter("ignore", TqdmWarning)
    pd.set_option("display.width", 250, "display.max_columns", None,
                  "display.max_colwidth", None, "display.max_rows", None)
    np.random.seed(seed)
    torch.manual_seed(seed)
    tables.style()
