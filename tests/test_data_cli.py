"""``dpnotes data list|verify|fetch`` on synthetic mirrors (the registry is patched in-process)."""

import gzip

import pytest
from datafiles import make_idx

import dpnotes.data.registry as registry_module
from dpnotes.cli import main


@pytest.fixture
def fake_mirror(tmp_path, monkeypatch):
    monkeypatch.delenv("DPNOTES_DATA_MIRROR", raising=False)
    ds, _ = make_idx(tmp_path / "m")
    monkeypatch.setattr(registry_module, "REGISTRY", {"mnist": ds})
    return tmp_path / "m"


def test_verify_prints_a_table_and_exits_0_when_all_match(fake_mirror, capsys):
    assert main(["data", "verify", "--mirror", str(fake_mirror)]) == 0
    out = capsys.readouterr().out
    assert out.count("OK ") == 4 and "4 of 4 files verified" in out


def test_verify_exits_1_when_a_file_is_corrupt(fake_mirror, capsys):
    bad = fake_mirror / "mnist" / "t10k-labels-idx1-ubyte.gz"
    bad.write_bytes(gzip.compress(b"garbage"))
    assert main(["data", "verify", "--mirror", str(fake_mirror)]) == 1
    out = capsys.readouterr().out
    assert "FAIL" in out and "t10k-labels-idx1-ubyte.gz" in out and "3 of 4 files verified" in out


def test_verify_without_mirror_is_a_one_line_error(fake_mirror, capsys):
    assert main(["data", "verify"]) == 2
    assert "no mirror" in capsys.readouterr().err


def test_verify_of_an_empty_mirror_fails(fake_mirror, tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert main(["data", "verify", "--mirror", str(tmp_path / "empty")]) == 1
    assert "no registered dataset file" in capsys.readouterr().out


def test_fetch_then_list_shows_cached(fake_mirror, tmp_path, capsys):
    cache = tmp_path / "cache"
    assert main(["data", "fetch", "mnist", "--mirror", str(fake_mirror), "--cache-dir", str(cache)]) == 0
    assert (cache / "mnist" / "train-images-idx3-ubyte").is_file()
    capsys.readouterr()
    assert main(["data", "list", "--cache-dir", str(cache)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("mnist:") and out.count("cached") == 4


def test_fetch_unknown_dataset_or_missing_data_is_a_one_line_error(fake_mirror, tmp_path, capsys):
    assert main(["data", "fetch", "svhn", "--cache-dir", str(tmp_path / "c")]) == 2
    assert "dataset must be one of" in capsys.readouterr().err
    assert main(["data", "fetch", "mnist", "--mirror", str(tmp_path / "none"), "--cache-dir", str(tmp_path / "c")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "DPNOTES_DATA_MIRROR" in err
