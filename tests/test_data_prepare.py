"""Shared data preparation (dpnotes.data.prepare) and the rule that no paper's module imports
another paper's."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from dpnotes.claims import PAPERS
from dpnotes.data import prepare

EXPERIMENTS = Path(prepare.__file__).resolve().parents[1] / "experiments"


def test_unit_scale_adds_a_channel_to_grayscale_only():
    gray = torch.tensor([[[0, 255], [51, 102]]], dtype=torch.uint8)
    out = prepare.unit_scale(gray)
    assert out.shape == (1, 1, 2, 2) and out.dtype == torch.float32
    assert out.flatten().tolist() == pytest.approx([0.0, 1.0, 0.2, 0.4])
    assert prepare.unit_scale(torch.zeros(2, 3, 4, 4, dtype=torch.uint8)).shape == (2, 3, 4, 4)


def test_standardize_per_channel_and_refuses_a_wrong_channel_count():
    x = torch.ones(2, 3, 2, 2)
    out = prepare.standardize(x, (0.5, 1.0, 0.0), (0.5, 1.0, 2.0))
    assert out[:, 0].unique().tolist() == [1.0] and out[:, 1].unique().tolist() == [0.0]
    assert out[:, 2].unique().tolist() == [0.5]
    with pytest.raises(ValueError, match="one value per channel"):
        prepare.standardize(x, (0.5,), (1.0,))


@given(st.integers(1, 60), st.one_of(st.none(), st.integers(0, 80)))
def test_fixed_subset_is_fixed_and_keeps_pairs_together(n, size):
    x, y = torch.arange(n) * 10, torch.arange(n)
    a, b = prepare.fixed_subset((x, y), size), prepare.fixed_subset((x, y), size)
    assert torch.equal(a[0], b[0]) and torch.equal(a[0], a[1] * 10)
    assert len(a[1]) == (n if size is None or size >= n else size)
    assert len(set(a[1].tolist())) == len(a[1])


def test_random_split_partitions():
    tr, te = prepare.random_split(50, 10, seed=3)
    assert len(te) == 10 and sorted(torch.cat([tr, te]).tolist()) == list(range(50))


def test_movielens_sizes_need_no_data():
    assert prepare.movielens_split_sizes(0.2) == (80_000, 20_000)
    users, items = prepare.movielens_sizes()
    assert users > 0 and items > 0


def test_bad_dataset_names_the_parameter():
    with pytest.raises(ValueError, match="dataset"):
        prepare.images("cifar-100", "train")


def _imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return out


@pytest.mark.parametrize("paper", PAPERS)
def test_no_paper_module_imports_another_papers(paper):
    """A paper's experiments module (and its helpers named after it) imports no other paper's."""
    others = [p for p in PAPERS if p != paper]
    for path in sorted(EXPERIMENTS.glob(f"{paper}*.py")):
        bad = [m for m in _imported_modules(path) for o in others
               if m == f"dpnotes.experiments.{o}" or m.startswith(f"dpnotes.experiments.{o}_")
               or m.startswith(f"dpnotes.experiments.{o}.")]
        assert not bad, f"{path.name} imports {bad}"
