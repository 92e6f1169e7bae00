"""Fault injection (issue 53): nothing unverified is read.

A record's every field a reader uses is validated on read (:mod:`dpnotes.record_fields`), and a
bad record is excluded by name, never a crash.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from test_engine_v2 import _clean, toy  # noqa: F401  (a tiny real DP-SGD experiments module)
from test_results import fake  # noqa: F401  (the fixture: a fake experiments module)

from dpnotes.cli import main
from dpnotes.record_checks import seal_path

REPO = Path(__file__).resolve().parents[1]
CHEAP = "gdp/quick/10fe1cb5e1701218"  # a committed record priced by rdp, rdp-classic and clt only


def _store_with_cheap(tmp_path) -> tuple[Path, Path]:
    root = tmp_path / "store"
    (root / "gdp" / "quick").mkdir(parents=True)
    for suffix in (".json", ".sha256"):
        shutil.copy(REPO / "results" / f"{CHEAP}{suffix}", root / f"{CHEAP}{suffix}")
    return root, root / f"{CHEAP}.json"


def _set(record: dict, path: str, value) -> None:
    *parents, last = path.split(".")
    for key in parents:
        record = record[int(key)] if isinstance(record, list) else record[key]
    record[int(last) if isinstance(record, list) else last] = value


# ---------------------------------------------------------------- every field a reader uses, validated

BAD_FIELDS = [("final.test_acc", float("nan"), "final.test_acc is NaN"),
              ("final.test_acc", 1e308, "final.test_acc is 1e+308, not a fraction in [0, 1]"),
              ("final.test_acc", "high", "final.test_acc is 'high', not a finite number"),
              ("final.steps", -3, "final.steps is -3, not an integer >= 0"),
              ("final.train_loss", float("inf"), "final.train_loss is inf, not a finite number"),
              ("epochs.0.test_acc", float("nan"), "epochs[0].test_acc is NaN"),
              ("epochs.0.epsilon.rdp.epsilon", "x", "epochs[0].epsilon.rdp.epsilon is 'x'"),
              ("final", None, "final is None, not an object"),
              ("epochs", None, "epochs is None, not a list"),
              ("privacy.delta", 2.0, "privacy.delta is 2.0"),
              ("provenance", None, "provenance is None, not an object"),
              ("provenance.wall_time_s", "1h", "provenance.wall_time_s is '1h'"),
              ("provenance.segments", [], "provenance.segments is not a non-empty list")]


@pytest.mark.parametrize("field, value, reason", BAD_FIELDS, ids=[f"{f}={v!r}" for f, v, _ in BAD_FIELDS])
def test_unsealed_record_with_a_bad_field_is_excluded_by_name(tmp_path, capsys, field, value, reason):
    root, path = _store_with_cheap(tmp_path)
    record = json.loads(path.read_text())
    _set(record, field, value)
    path.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")  # NaN and Infinity as Python writes them
    seal_path(path).unlink()  # unsealed: written before seals, or its seal deleted
    capsys.readouterr()
    assert main(["results", "verify", "--results", str(root)]) == 2
    out = capsys.readouterr().out
    assert f"EXCLUDED {CHEAP}.json: a field is not valid: {reason}" in out, out
    assert main(["scoreboard", "--paper", "gdp", "--results", str(root), "--json", "--no-cache"]) == 0
    excluded = json.loads(capsys.readouterr().out)["excluded_records"]
    assert [e["path"] for e in excluded] == [f"{CHEAP}.json"] and reason in excluded[0]["reason"]
    assert main(["cost", "--results", str(root), "--no-claims", "--json"]) == 0
    assert main(["run", "gdp", "--profile", "quick", "--dry-run", "--results", str(root)]) == 0
    assert f"{CHEAP.rsplit('/', 1)[1]}  BAD" in capsys.readouterr().out


def test_every_committed_record_has_valid_fields():
    from dpnotes.record_fields import problem

    bad = {p.relative_to(REPO).as_posix(): problem(json.loads(p.read_text()))
           for p in sorted((REPO / "results").glob("*/*/*.json"))}
    assert len(bad) > 100 and not {k: v for k, v in bad.items() if v}


def test_a_record_with_a_bad_field_is_not_stored(tmp_path):
    from dpnotes.results import Store

    record = json.loads((REPO / "results" / f"{CHEAP}.json").read_text())
    record["final"]["test_acc"] = 68.2  # a percentage where a fraction belongs
    with pytest.raises(ValueError, match="a field is not valid: final.test_acc is 68.2, not a fraction in"):
        Store(tmp_path).put(record)
    assert not any(tmp_path.iterdir())


# ---------------------------------------------------------------- checkpoints carry a digest and are checked

def _toy(checkpoint, epochs=2):
    from toy_runs import run

    from dpnotes.train import TrainConfig

    return run(TrainConfig(epochs=epochs, batch_size=20, noise_multiplier=1.0, accountants=("rdp",)),
               checkpoint=checkpoint)[0]


def _flip_a_weight_byte(path: Path) -> None:
    """Flip one byte inside the stored bytes of the model's largest tensor: torch still loads the file."""
    import torch

    state = torch.load(path, weights_only=True)
    tensor = max(state["model"].values(), key=lambda t: t.numel())
    data = bytearray(path.read_bytes())
    at = data.find(tensor.numpy().tobytes())
    assert at > 0
    data[at + tensor.numel() * tensor.element_size() // 2] ^= 0x10
    path.write_bytes(bytes(data))
    assert torch.load(path, weights_only=True)["model"].keys() == state["model"].keys()  # loads silently


def test_a_flipped_byte_in_a_checkpoint_is_refused_not_resumed(tmp_path):
    path = tmp_path / "run.pt"
    _toy(path, epochs=1)
    _flip_a_weight_byte(path)
    with pytest.raises(ValueError, match=f"checkpoint {path} is refused \\(corrupted: its content does not match"):
        _toy(path)


def test_a_flipped_byte_in_a_checkpoint_stores_no_record(tmp_path, toy, monkeypatch):  # noqa: F811
    from dpnotes import runner
    from dpnotes.results import Store

    _clean(monkeypatch, dirty=False)
    store = Store(tmp_path)
    toy.die_at_epoch = 2
    with pytest.raises(KeyboardInterrupt):
        runner.run_paper("gdp", "paper", store=store, progress=False)
    toy.die_at_epoch = None
    (checkpoint,) = (tmp_path / ".checkpoints").glob("*.pt")
    _flip_a_weight_byte(checkpoint)
    with pytest.raises(ValueError, match="corrupted"):
        runner.run_paper("gdp", "paper", store=store, progress=False)
    assert not list(store.records()) and not list(tmp_path.glob("gdp/paper/*.json"))


@pytest.mark.parametrize("key, value, reason", [
    ("model", "weights", "model is a str, not a dict"), ("plugins", 3, "plugins is a int, not a list"),
    ("step", "7", "step is a str, not a int"),
    ("noise_gen", [1, 2], "noise_gen is not a generator state \\(a uint8 tensor\\)")])
def test_a_checkpoint_of_the_wrong_structure_is_named(tmp_path, key, value, reason):
    import torch

    from dpnotes import digest_file

    path = tmp_path / "run.pt"
    _toy(path, epochs=1)
    state = torch.load(path, weights_only=True)
    state[key] = value
    digest_file.write(path, digest_file.torch_bytes(state))  # a matching digest: only the structure is wrong
    with pytest.raises(ValueError, match=f"checkpoint {path} is not a dpnotes checkpoint \\({reason}\\)"):
        _toy(path)


def test_a_checkpoint_that_does_not_fit_the_model_is_named(tmp_path):
    import torch

    from dpnotes import digest_file

    path = tmp_path / "run.pt"
    _toy(path)  # the same config: the checkpoint of its last epoch
    state = torch.load(path, weights_only=True)
    name = next(iter(state["model"]))
    state["model"][name] = torch.zeros(3, 1)
    digest_file.write(path, digest_file.torch_bytes(state))
    with pytest.raises(ValueError, match=f"checkpoint {path} does not fit this run \\(RuntimeError: "):
        _toy(path)


def test_a_checkpoint_without_a_digest_is_refused_unless_accepted(tmp_path, monkeypatch, capsys):
    import torch

    path = tmp_path / "run.pt"
    whole = _toy(path)  # the checkpoint of its last epoch: resuming from it gives the same record
    torch.save(torch.load(path, weights_only=True), path)  # as dpnotes wrote checkpoints before digests
    with pytest.raises(ValueError, match="written before checkpoints carried a content digest"):
        _toy(path)
    monkeypatch.setenv("DPNOTES_UNDIGESTED_CHECKPOINTS", "accept")
    resumed = _toy(path)
    assert "read anyway" in capsys.readouterr().err
    assert [e["train_loss"] for e in resumed["epochs"]] == [e["train_loss"] for e in whole["epochs"]]


# ---------------------------------------------------------------- derived data caches carry a digest

def _imdb(tmp_path, form):
    from datafiles import make_imdb_jsonl, make_imdb_tarball

    from dpnotes.data.registry import dataset

    spec = make_imdb_jsonl(tmp_path / "m") if form == "jsonl" else make_imdb_tarball(tmp_path / "web")
    return dict(mirror=tmp_path / "m", cache_dir=tmp_path / "c", registry={"imdb": dataset("imdb", "", spec)})


def _damage(path: Path, how: str) -> None:
    data = path.read_bytes()
    if how == "truncated":
        path.write_bytes(data[: len(data) // 2])
    else:  # one bit flipped inside the content
        flipped = bytearray(data)
        flipped[len(data) // 3] ^= 0x01
        path.write_bytes(bytes(flipped))


@pytest.mark.parametrize("how", ["truncated", "bit-flipped"])
def test_a_damaged_imdb_sequences_cache_is_named_and_rebuilt(tmp_path, capsys, how):
    import torch

    from dpnotes.data.imdb import imdb_sequences

    kw = _imdb(tmp_path, "jsonl")
    fresh = imdb_sequences(num_words=7, maxlen=6, **kw)
    (cache,) = (tmp_path / "c" / "imdb" / "derived").glob("sequences-*.pt")
    _damage(cache, how)
    capsys.readouterr()
    again = imdb_sequences(num_words=7, maxlen=6, **kw)
    assert all(torch.equal(a, b) for a, b in zip(again, fresh))
    err = capsys.readouterr().err
    assert f"IMDb sequences cache {cache}" in err and "rebuilding it" in err and "Traceback" not in err, err
    assert imdb_sequences(num_words=7, maxlen=6, **kw) and capsys.readouterr().err == ""  # rebuilt: intact


@pytest.mark.parametrize("how", ["truncated", "bit-flipped"])
def test_a_damaged_imdb_reviews_cache_is_named_and_rebuilt(tmp_path, capsys, how):
    from dpnotes.data.imdb import load_imdb

    kw = _imdb(tmp_path, "tarball")
    texts, labels = load_imdb("train", **kw)
    (cache,) = (tmp_path / "c" / "imdb" / "derived").glob("aclImdb-reviews-*.jsonl")
    _damage(cache, how)
    capsys.readouterr()
    again, again_labels = load_imdb("train", **kw)
    assert again == texts and again_labels.tolist() == labels.tolist()
    err = capsys.readouterr().err
    assert f"IMDb reviews cache {cache}" in err and "rebuilding it" in err, err


# ---------------------------------------------------------------- integrity not resting on a file beside it

def _fake_store(tmp_path, fake):  # noqa: F811
    from dpnotes import runner
    from dpnotes.results import Store

    store = Store(tmp_path / "store")
    a, b = runner.run_paper("gdp", "smoke", store=store, progress=False)
    return store, store.root / "gdp" / "smoke", a["id"], b["id"]


def _rewrite(path: Path, change) -> None:
    record = json.loads(path.read_text())
    change(record)
    path.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")


def _verify(root, capsys) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["results", "verify", "--results", str(root)])
    return code, capsys.readouterr().out


def test_dpnotes_run_lists_each_record_in_its_folders_manifest(tmp_path, fake, capsys):  # noqa: F811
    from dpnotes import record_manifest

    store, folder, a, b = _fake_store(tmp_path, fake)
    listed = record_manifest.read(folder)
    assert sorted(listed) == sorted([f"{a}.json", f"{b}.json"])
    assert all(listed[n] == hashlib.sha256((folder / n).read_bytes()).hexdigest() for n in listed)
    assert _verify(store.root, capsys)[0] == 0


@pytest.mark.parametrize("seal", ["deleted", "recomputed"])
def test_an_edited_record_whose_seal_was_deleted_or_recomputed_is_refused_by_name(tmp_path, fake, capsys, seal):
    store, folder, a, b = _fake_store(tmp_path, fake)
    path = folder / f"{a}.json"
    _rewrite(path, lambda r: r["final"].update(loss=0.01))
    if seal == "deleted":
        seal_path(path).unlink()
    else:  # `sha256sum x.json > x.sha256`, as an editor who knows about seals would
        seal_path(path).write_text(f"{hashlib.sha256(path.read_bytes()).hexdigest()}  {path.name}\n")
    assert [r["id"] for r in store.records()] == [b]
    code, out = _verify(store.root, capsys)
    assert code == 2 and f"EXCLUDED gdp/smoke/{a}.json: its content differs from the sha256 its folder's " \
                         "MANIFEST.sha256sum lists: edited after it was stored" in out, out
    assert main(["results", "seal", "--results", str(store.root)]) == 0
    assert "1 record(s) whose content differs from their listed sha256 or seal refused" in capsys.readouterr().out
    assert (seal == "deleted") != seal_path(path).exists()  # not sealed over
    assert [r["id"] for r in store.records()] == [b]


def test_seal_takes_a_changed_record_only_when_told_why_and_logs_it(tmp_path, fake, capsys):  # noqa: F811
    store, folder, a, b = _fake_store(tmp_path, fake)
    path = folder / f"{a}.json"
    old = hashlib.sha256(path.read_bytes()).hexdigest()
    _rewrite(path, lambda r: r["provenance"].update(note="moved from another store"))
    seal_path(path).unlink()
    assert main(["results", "seal", "--results", str(store.root), "--accept-changed", " "]) == 2
    assert main(["results", "seal", "--results", str(store.root), "--accept-changed", "provenance note added"]) == 0
    assert "1 changed record(s) accepted and logged in MANIFEST.log" in capsys.readouterr().out
    log = (folder / "MANIFEST.log").read_text().split("\t")
    assert log[1:] == [path.name, old, hashlib.sha256(path.read_bytes()).hexdigest(), "provenance note added\n"]
    assert sorted(r["id"] for r in store.records()) == sorted([a, b]) and _verify(store.root, capsys)[0] == 0


def test_a_record_not_in_the_manifest_is_refused_and_results_manifest_lists_it(tmp_path, fake, capsys):  # noqa: F811
    from dpnotes import record_manifest

    store, folder, a, b = _fake_store(tmp_path, fake)
    entries = record_manifest.read(folder)
    del entries[f"{a}.json"]  # as a record committed on another branch, before the merge brought its line
    record_manifest.write(folder, entries)
    assert [r["id"] for r in store.records()] == [b]
    code, out = _verify(store.root, capsys)
    assert code == 2 and f"EXCLUDED gdp/smoke/{a}.json: it is not listed in its folder's MANIFEST.sha256sum" in out
    assert main(["results", "manifest", "--results", str(store.root)]) == 0
    assert "1 record(s) added" in capsys.readouterr().out
    assert _verify(store.root, capsys)[0] == 0


def test_a_record_listed_twice_with_different_digests_is_refused(tmp_path, fake, capsys):  # noqa: F811
    store, folder, a, b = _fake_store(tmp_path, fake)
    with open(folder / "MANIFEST.sha256sum", "a") as out:  # a union merge of two edits of one record
        out.write(f"{'0' * 64}  {a}.json\n")
    code, out = _verify(store.root, capsys)
    assert code == 2 and "MANIFEST.sha256sum lists it twice with different sha256" in out
    assert main(["results", "manifest", "--results", str(store.root)]) == 0
    assert _verify(store.root, capsys)[0] == 2  # still refused: only --accept-changed resolves it
    assert main(["results", "manifest", "--results", str(store.root), "--accept-changed", "merge of main"]) == 0
    assert _verify(store.root, capsys)[0] == 0


def test_a_listed_record_that_is_gone_is_named_and_dropped_by_results_manifest(tmp_path, fake, capsys):  # noqa: F811
    store, folder, a, b = _fake_store(tmp_path, fake)
    (folder / f"{a}.json").rename(tmp_path / "moved-away.json")
    code, out = _verify(store.root, capsys)
    assert code == 2 and f"MISSING gdp/smoke/{a}.json: listed in MANIFEST.sha256sum" in out
    assert main(["results", "manifest", "--results", str(store.root)]) == 0
    assert "1 line(s) of files that are gone dropped" in capsys.readouterr().out
    assert _verify(store.root, capsys)[0] == 0  # the seal left behind is no record


def test_a_store_without_manifests_is_flagged_and_results_manifest_writes_them(tmp_path, fake, capsys):  # noqa: F811
    from dpnotes import runner
    from dpnotes.results import Store

    store, folder, a, b = _fake_store(tmp_path, fake)
    (folder / "MANIFEST.sha256sum").unlink()  # a store written before manifests
    code, out = _verify(store.root, capsys)
    assert code == 2 and f"UNLISTED gdp/smoke/{a}.json: its folder has no MANIFEST.sha256sum" in out
    assert sorted(r["id"] for r in store.records()) == sorted([a, b])  # used, flagged (as unsealed ones are)
    (folder / f"{b}.json").unlink()
    seal_path(folder / f"{b}.json").unlink()
    runner.run_paper("gdp", "smoke", store=Store(store.root), progress=False)  # b again: one record is no manifest
    assert not (folder / "MANIFEST.sha256sum").exists()
    assert main(["results", "manifest", "--results", str(store.root)]) == 0
    assert _verify(store.root, capsys)[0] == 0


def test_the_committed_manifests_list_exactly_the_committed_records():
    """Every committed results folder has a manifest listing each of its records with its sha256
    (regenerate with `dpnotes results manifest`, then commit it with the records)."""
    from dpnotes import record_manifest

    folders = sorted({p.parent for p in (REPO / "results").glob("*/*/*.json") if p.parent.name != "smoke"})
    assert len(folders) >= 10
    for folder in folders:
        listed = record_manifest.read(folder)
        assert listed is not None, f"{folder} has no {record_manifest.NAME}: run `dpnotes results manifest`"
        actual = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.glob("*.json")}
        assert listed == actual, (f"{folder}/{record_manifest.NAME} does not list its records as they are: "
                                  f"unlisted {sorted(set(actual) - set(listed))[:5]}, gone "
                                  f"{sorted(set(listed) - set(actual))[:5]}, differing "
                                  f"{sorted(n for n in set(listed) & set(actual) if listed[n] != actual[n])[:5]}; "
                                  "`dpnotes results manifest` adds records that pass every check")


# ---------------------------------------------------------------- re-running a stored spec: the record's thread count

def _reference(tmp_path, fake, monkeypatch, threads: int):  # noqa: F811
    """A reference store (as the committed one) whose records were made on ``threads`` threads."""
    import torch

    from dpnotes import runner
    from dpnotes.results import Store

    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        runner.run_paper("gdp", "smoke", store=Store(tmp_path / "committed"), progress=False)
    finally:
        torch.set_num_threads(before)
    monkeypatch.setenv("DPNOTES_REFERENCE_RESULTS", str(tmp_path / "committed"))


def _threads_of(store_root: Path) -> set[str]:
    from dpnotes.results import Store

    return {s["device"].rsplit(", ", 1)[1] for r in Store(store_root).records() for s in r["provenance"]["segments"]}


def test_rerunning_a_stored_spec_uses_its_records_thread_count(tmp_path, fake, monkeypatch, capsys):  # noqa: F811
    import torch

    _reference(tmp_path, fake, monkeypatch, threads=3)
    torch_threads = torch.get_num_threads()
    capsys.readouterr()
    assert main(["run", "gdp", "--profile", "smoke", "--device", "cpu", "--no-progress",
                 "--results", str(tmp_path / "again")]) == 0
    assert _threads_of(tmp_path / "again") == {"3 threads"}
    err = capsys.readouterr().err
    assert "3 torch thread(s), as its stored record" in err and "bit for bit also needs the same CPU kernels" in err
    assert torch.get_num_threads() == torch_threads  # restored after each run


def test_rerunning_a_stored_spec_on_other_threads_says_what_that_changes(tmp_path, fake, monkeypatch, capsys):  # noqa: F811
    _reference(tmp_path, fake, monkeypatch, threads=3)
    capsys.readouterr()
    assert main(["run", "gdp", "--profile", "smoke", "--device", "cpu", "--no-progress", "--threads", "2",
                 "--results", str(tmp_path / "again")]) == 0
    assert _threads_of(tmp_path / "again") == {"2 threads"}
    err = capsys.readouterr().err
    assert "ran on 3 torch thread(s), this run on 2: float rounding differs" in err and "--threads 3 reproduces" in err
