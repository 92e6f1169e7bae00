"""book/execute.py: a chapter is executed again exactly when something it shows may have changed."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import nbformat
import pytest

REPO = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("book_execute", REPO / "book" / "execute.py")
execute = importlib.util.module_from_spec(spec)
spec.loader.exec_module(execute)


@pytest.fixture
def store(tmp_path):
    for paper in ("gdp", "dpis"):
        (tmp_path / "results" / paper / "quick").mkdir(parents=True)
        (tmp_path / "results" / paper / "quick" / "a.json").write_text("{}")
    return tmp_path / "results"


@pytest.fixture
def notebook(tmp_path):
    path = tmp_path / "gdp.ipynb"
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("profile = 'quick'", metadata={"tags": ["parameters"]}),
                nbformat.v4.new_markdown_cell("# GDP")]
    nbformat.write(nb, path)
    return path


def test_key_follows_the_notebook_its_records_and_parameters(store, notebook):
    key = execute.cache_key(notebook, {"profile": "quick"}, store)
    assert key == execute.cache_key(notebook, {"profile": "quick"}, store)
    assert key != execute.cache_key(notebook, {"profile": "smoke"}, store)
    (store / "dpis" / "quick" / "b.json").write_text("{}")  # another paper's record: no change
    assert key == execute.cache_key(notebook, {"profile": "quick"}, store)
    (store / "gdp" / "quick" / "a.json").write_text('{"changed": 1}')
    changed = execute.cache_key(notebook, {"profile": "quick"}, store)
    assert changed != key
    notebook.write_text(notebook.read_text().replace("# GDP", "# GDP, edited"))
    assert execute.cache_key(notebook, {"profile": "quick"}, store) != changed


def test_scoreboard_key_follows_every_record(store, tmp_path):
    board = tmp_path / "scoreboard.ipynb"
    nbformat.write(nbformat.v4.new_notebook(), board)
    key = execute.cache_key(board, {}, store)
    (store / "dpis" / "quick" / "b.json").write_text("{}")
    assert execute.cache_key(board, {}, store) != key


def test_executes_once_then_reuses_and_hides_injected_parameters(store, notebook, tmp_path, monkeypatch):
    calls = []

    def fake_papermill(src, out, parameters, cwd, progress_bar):
        calls.append(parameters)
        nb = nbformat.read(src, as_version=4)
        nb.cells.insert(1, nbformat.v4.new_code_cell("profile = 'smoke'",
                                                     metadata={"tags": ["injected-parameters"]}))
        return nb

    monkeypatch.setattr(execute.papermill, "execute_notebook", fake_papermill)
    out = tmp_path / "executed" / "gdp.ipynb"
    out.parent.mkdir()
    assert execute.execute(notebook, out, {"profile": "smoke"}, store)
    assert not execute.execute(notebook, out, {"profile": "smoke"}, store)
    assert calls == [{"profile": "smoke"}]
    injected = nbformat.read(out, as_version=4).cells[1]
    assert injected.metadata.tags == ["injected-parameters", "remove-cell"]
    (store / "gdp" / "quick" / "new.json").write_text("{}")
    assert execute.execute(notebook, out, {"profile": "smoke"}, store)
