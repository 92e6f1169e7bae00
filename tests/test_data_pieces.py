"""Carrying a dataset in pieces: pack splits, unpack joins across deliveries, and refuses
pieces that do not add up to the packed file."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from dpnotes.data import pieces


def _mirror(tmp_path, size=2500):
    root = tmp_path / "mirror"
    (root / "adult").mkdir(parents=True)
    (root / "adult" / "adult.names").write_bytes(bytes(range(256)) * (size // 256) + b"x" * (size % 256))
    return root


def test_pack_then_unpack_in_two_deliveries(tmp_path):
    mirror = _mirror(tmp_path)
    written = pieces.pack("adult", tmp_path / "out", mirror=[mirror], piece_bytes=1000)
    parts = sorted(p for p in written if p.suffix != ".json")
    assert [p.stat().st_size for p in parts] == [1000, 1000, 500]
    first, second = tmp_path / "d1", tmp_path / "d2"
    for d, chosen in ((first, parts[:2]), (second, parts[2:])):
        (d / "adult").mkdir(parents=True)
        for p in chosen:
            (d / "adult" / p.name).write_bytes(p.read_bytes())
        meta = (tmp_path / "out/adult/adult.names.pieces.json").read_text()
        (d / "adult" / "adult.names.pieces.json").write_text(meta)
    target = tmp_path / "new"
    assert "waiting for adult.names.part002" in pieces.unpack(first, target)[0]
    assert not (target / "adult" / "adult.names").exists()
    assert "joined" in pieces.unpack(second, target)[0]
    assert (target / "adult" / "adult.names").read_bytes() == (mirror / "adult" / "adult.names").read_bytes()
    assert "already joined" in pieces.unpack(second, target)[0]


def test_a_corrupted_piece_is_refused(tmp_path):
    mirror = _mirror(tmp_path)
    pieces.pack("adult", tmp_path / "out", mirror=[mirror], piece_bytes=1000)
    bad = tmp_path / "out" / "adult" / "adult.names.part001"
    bad.write_bytes(b"\0" * 1000)
    with pytest.raises(ValueError, match="adult/adult.names: the joined pieces do not match"):
        pieces.unpack(tmp_path / "out", tmp_path / "new")
    assert not (tmp_path / "new" / "adult" / "adult.names").exists()


@pytest.mark.parametrize("path", ["../evil", "/etc/passwd"])
def test_a_pieces_file_cannot_write_outside_the_mirror(tmp_path, path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "x.pieces.json").write_text(json.dumps({"path": path, "size": 1, "sha256": "0", "pieces": []}))
    with pytest.raises(ValueError, match="leaves the mirror"):
        pieces.unpack(tmp_path / "src", tmp_path / "new")


def test_bad_inputs_name_what_is_wrong(tmp_path):
    with pytest.raises(ValueError, match="dataset must be one of"):
        pieces.pack("nope", tmp_path, mirror=[tmp_path])
    with pytest.raises(ValueError, match="none of its files"):
        pieces.pack("adult", tmp_path / "o", mirror=[tmp_path])
    with pytest.raises(ValueError, match="no \\*.pieces.json"):
        pieces.unpack(tmp_path, tmp_path / "new")


def test_cli_round_trip(tmp_path):
    mirror = _mirror(tmp_path)
    run = lambda *a: subprocess.run([sys.executable, "-m", "dpnotes", "data", *a], capture_output=True, text=True)
    out = run("pack", "adult", "--into", str(tmp_path / "out"), "--piece-mib", "0.001", "--mirror", str(mirror))
    assert out.returncode == 0 and "adult: 3 piece(s)" in out.stdout, out.stderr
    out = run("unpack", str(tmp_path / "out"), "--into", str(tmp_path / "new"))
    assert out.returncode == 0 and "joined" in out.stdout
    bad = run("pack", "adult", "--into", str(tmp_path / "o2"), "--piece-mib", "0", "--mirror", str(mirror))
    assert bad.returncode == 2 and "--piece-mib" in bad.stderr
