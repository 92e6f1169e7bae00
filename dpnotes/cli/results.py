"""``dpnotes results verify|seal|manifest``: check a whole results store, seal its unsealed
records, or write its folders' manifests.

``verify`` runs the checks every reader runs (:mod:`dpnotes.record_checks`: fields valid, file
name = id = hash of the spec, content = seal = the sha256 its folder's manifest lists, ledger
reprices to the stored eps) on every record file and names each one that fails and why; exit
code 2 if any fails, has no seal, lies in a folder without a manifest, or a manifest lists a file
that is not there. ``--no-cache`` reprices every ledger afresh (slow: minutes for the committed
store). ``--vouch`` (the records committed with dpnotes only) reprices every record, ignoring the
committed list of repriced records, then writes that list (``results/REPRICED.txt``,
:mod:`dpnotes.repriced`) with the sha256 of each record that passed: commit it with the records,
and a fresh clone's scoreboard verifies them by file digest instead of repricing them.

``seal`` writes the seal (``<run_id>.sha256``) of each record that passes every other check
but has none (records written before seals existed); it never seals a failing one. A record
whose content differs from the sha256 its manifest lists (or from its seal) is refused; with
``--accept-changed REASON`` a record that passes every other check is sealed anyway, its
manifest line replaced, and the change logged in ``MANIFEST.log`` with the reason.

``manifest`` writes each folder's ``MANIFEST.sha256sum`` (:mod:`dpnotes.record_manifest`): it
adds the records that pass every other check (a store written before manifests, records a merge
brought in), drops the lines of files that are gone, and never changes a listed sha256 unless
given ``--accept-changed REASON`` (logged). ``git diff results/`` then shows what changed. On the
records committed with dpnotes it also rewrites their list of repriced records (``--vouch``'s), from
the records that pass every check: commit it with them.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

from dpnotes.claims import PAPERS


def register(sub) -> None:
    p = sub.add_parser("results", help="verify a results store, seal its records or write its manifests",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    verify = actions.add_parser("verify", help="check every record; exit 2 if any fails")
    verify.add_argument("--no-cache", action="store_true", help="reprice every ledger afresh (slow)")
    verify.add_argument("--vouch", action="store_true",
                        help="the committed records only: reprice every one (the committed list of repriced "
                             "records ignored), then write that list, results/REPRICED.txt, naming those that pass")
    verify.add_argument("--json", action="store_true",
                        help='print {"verified": N, "excluded": [...], "unsealed": [...], "unlisted": [...], '
                             '"missing": [...]}')
    seal = actions.add_parser("seal", help="seal the records that pass every other check")
    manifest = actions.add_parser("manifest", help="list the records that pass every other check in their "
                                  "folders' MANIFEST.sha256sum")
    for q in (verify, seal, manifest):
        q.add_argument("--results", metavar="DIR", help="results store (default: $DPNOTES_RESULTS or ./results)")
        q.add_argument("--paper", choices=PAPERS, help="one paper only")
    for q in (seal, manifest):
        q.add_argument("--accept-changed", metavar="REASON",
                       help="also take records whose content differs from their listed sha256 (or seal) and "
                            "pass every other check; REASON is logged in MANIFEST.log")
    p.set_defaults(func=main)


def existing_store(option: str | None):
    """The :class:`~dpnotes.results.Store` at ``--results`` (or the default root), which must be
    an existing directory (``ValueError`` naming it otherwise)."""
    from dpnotes.results import Store

    store = Store(option)
    if not store.root.is_dir():
        what = "is not a directory" if store.root.exists() else "does not exist"
        raise ValueError(f"--results {store.root}: {what}")
    return store


DIGEST_FAULTS = ("does not match its seal", "differs from the sha256", "lists it twice")


def _passing_but(root: Path, excluded: list[dict], faults: tuple[str, ...], **checks) -> list[Path]:
    """The excluded record files whose reason is one of ``faults`` and that pass every other check
    (:func:`~dpnotes.record_checks.problem` with ``checks``)."""
    from dpnotes.record_checks import problem

    return [root / e["path"] for e in excluded if any(f in e["reason"] for f in faults)
            and problem(root / e["path"], root, **checks)[1] is None]


def _accept(path: Path, reason: str) -> None:
    """Seal ``path`` and list its sha256 in its folder's manifest, logging the replaced one."""
    from dpnotes import record_manifest
    from dpnotes.record_checks import seal_path, seal_text
    from dpnotes.results import atomic_write_text

    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    with record_manifest.locked(path.parent):
        entries = record_manifest.read(path.parent) or {}
        record_manifest.log(path.parent, path.name, entries.get(path.name), digest, reason)
        entries[path.name] = digest
        record_manifest.write(path.parent, entries)
        atomic_write_text(seal_path(path), seal_text(path, data))


def _write_manifests(root: Path, paths: list[Path], missing: list[dict]) -> tuple[int, int]:
    """List the record files ``paths`` that their folders' manifests do not list yet and drop the
    lines of ``missing`` files: ``(added, dropped)``."""
    from dpnotes import record_manifest

    by_folder: dict[Path, list[Path]] = {}
    for path in paths:
        by_folder.setdefault(path.parent, []).append(path)
    for entry in missing:
        by_folder.setdefault(root / Path(entry["path"]).parent, [])
    added = dropped = 0
    for folder, new in sorted(by_folder.items()):
        with record_manifest.locked(folder):
            entries = record_manifest.read(folder) or {}
            for name in [n for n in entries if not (folder / n).is_file()]:
                del entries[name]
                dropped += 1
            for path in sorted(p for p in new if p.name not in entries):
                entries[path.name] = hashlib.sha256(path.read_bytes()).hexdigest()
                added += 1
            record_manifest.write(folder, entries)
    return added, dropped


def main(args) -> int:
    from dpnotes import record_manifest
    from dpnotes.record_checks import scan, seal_path, seal_text
    from dpnotes.results import atomic_write_text

    store = existing_store(args.results)
    from dpnotes import repriced

    vouch = getattr(args, "vouch", False)
    if vouch and not repriced.committed(store.root):
        raise ValueError(f"--vouch writes the list only for the records committed with dpnotes "
                         f"({repriced.COMMITTED}), the only store it is read for; not {store.root}")
    found = scan(store.root, args.paper, cache=not getattr(args, "no_cache", False), vouch=not vouch)
    if args.action == "verify":
        if vouch:
            _vouch(store.root, found, args.paper)
        return _report(store, found, args.json)
    changed = _passing_but(store.root, found.excluded, DIGEST_FAULTS, digests=False)
    note = f"{len(changed)} record(s) whose content differs from their listed sha256 or seal refused" + (
        " (`dpnotes results verify` names them; --accept-changed REASON takes them, logged)" if changed else "")
    if args.accept_changed is not None and changed:
        if not args.accept_changed.strip():
            raise ValueError("--accept-changed needs a reason (it is logged in MANIFEST.log)")
        for path in changed:
            _accept(path, args.accept_changed)
        note = f"{len(changed)} changed record(s) accepted and logged in {record_manifest.LOG}"
    if args.action == "seal":
        for entry in found.unsealed:
            path = store.root / entry["path"]
            atomic_write_text(seal_path(path), seal_text(path, path.read_bytes()))
        print(f"{store.root}: sealed {len(found.unsealed)} record(s); {len(found.excluded) - len(changed)} other "
              f"failing record(s) left unsealed; {note}")
        return 0
    unlisted = _passing_but(store.root, found.excluded, ("is not listed in its folder",), manifest=None)
    verified = [store.root / e["path"] for e in found.unlisted] + unlisted
    added, dropped = _write_manifests(store.root, verified, found.missing)
    if repriced.committed(store.root):  # the committed records: their list of repriced ones kept current
        _vouch(store.root, scan(store.root, args.paper), args.paper)
    failing = len(found.excluded) - len(changed) - len(unlisted)
    print(f"{store.root}: {record_manifest.NAME}: {added} record(s) added, {dropped} line(s) of files that are gone "
          f"dropped; {failing} other failing record(s) not listed; {note}")
    return 0


def _vouch(root: Path, found, paper: str | None) -> None:
    """Write the committed list of repriced records (:mod:`dpnotes.repriced`): each record ``found``
    verified, with its sha256, and, when one paper was scanned, the other papers' entries of a list
    made under the current fingerprint whose files still have their listed sha256."""
    from dpnotes import repriced
    from dpnotes.record import Record

    entries = {rel: digest for rel, digest in repriced.listed(root).items() if paper is not None
               and not rel.startswith(f"{paper}/") and (root / rel).is_file()
               and hashlib.sha256((root / rel).read_bytes()).hexdigest() == digest}
    for record in found.records:
        r = Record.of(record)
        rel = f"{r.paper}/{r.profile}/{r.id}.json"
        entries[rel] = hashlib.sha256((root / rel).read_bytes()).hexdigest()
    repriced.write(root, entries)
    print(f"{repriced.path(root)}: {len(entries)} record(s) listed as repriced", file=sys.stderr)


def _report(store, found, as_json: bool) -> int:
    """``dpnotes results verify``'s output and exit code."""
    from dpnotes import record_manifest

    if as_json:
        print(json.dumps({"verified": len(found.records), "excluded": found.excluded, "unsealed": found.unsealed,
                          "unlisted": found.unlisted, "missing": found.missing}, indent=1))
    else:
        for e in found.excluded:
            print(f"EXCLUDED {e['path']}: {e['reason']}")
        for entry in found.unsealed:
            print(f"UNSEALED {entry['path']}: no {entry['id']}.sha256 (`dpnotes results seal` "
                  "seals records that pass every other check)")
        for entry in found.unlisted:
            print(f"UNLISTED {entry['path']}: its folder has no {record_manifest.NAME} (`dpnotes results manifest` "
                  "writes it)")
        for entry in found.missing:
            print(f"MISSING {entry['path']}: listed in {record_manifest.NAME}, no such file (moved away? "
                  "`dpnotes results manifest` drops its line)")
        print(f"{store.root}: {len(found.records)} record(s) verified, {len(found.excluded)} excluded, "
              f"{len(found.unsealed)} of the verified unsealed, {len(found.unlisted)} unlisted, "
              f"{len(found.missing)} listed but missing", file=sys.stderr)
    return 2 if found.excluded or found.unsealed or found.unlisted or found.missing else 0
