"""``dpnotes results verify|seal``: check a whole results store, or seal its unsealed records.

``verify`` runs the checks every reader runs (:mod:`dpnotes.record_checks`: file name = id =
hash of the spec, content = seal, ledger reprices to the stored eps) on every record file and
names each one that fails and why; exit code 2 if any fails or has no seal. ``--no-cache``
reprices every ledger afresh (slow: minutes for the committed store).

``seal`` writes the seal (``<run_id>.sha256``) of each record that passes every other check
but has none (records written before seals existed); it never seals a failing one.
"""

from __future__ import annotations

import argparse
import json
import sys

from dpnotes.claims import PAPERS


def register(sub) -> None:
    p = sub.add_parser("results", help="verify a results store, or seal its unsealed records",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    verify = actions.add_parser("verify", help="check every record; exit 2 if any fails")
    verify.add_argument("--no-cache", action="store_true", help="reprice every ledger afresh (slow)")
    verify.add_argument("--json", action="store_true",
                        help='print {"verified": N, "excluded": [...], "unsealed": [...]}')
    seal = actions.add_parser("seal", help="seal the records that pass every other check")
    for q in (verify, seal):
        q.add_argument("--results", metavar="DIR", help="results store (default: $DPNOTES_RESULTS or ./results)")
        q.add_argument("--paper", choices=PAPERS, help="one paper only")
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


def main(args) -> int:
    from dpnotes.record_checks import scan, seal_path, seal_text
    from dpnotes.results import atomic_write_text

    store = existing_store(args.results)
    found = scan(store.root, args.paper, cache=not getattr(args, "no_cache", False))
    if args.action == "seal":
        for entry in found.unsealed:
            path = store.root / entry["path"]
            atomic_write_text(seal_path(path), seal_text(path, path.read_bytes()))
        print(f"{store.root}: sealed {len(found.unsealed)} record(s); {len(found.excluded)} failing "
              "record(s) left unsealed" + (" (see `dpnotes results verify`)" if found.excluded else ""))
        return 0
    if args.json:
        print(json.dumps({"verified": len(found.records), "excluded": found.excluded,
                          "unsealed": found.unsealed}, indent=1))
    else:
        for e in found.excluded:
            print(f"EXCLUDED {e['path']}: {e['reason']}")
        for entry in found.unsealed:
            print(f"UNSEALED {entry['path']}: no {entry['id']}.sha256 (`dpnotes results seal` "
                  "seals records that pass every other check)")
        print(f"{store.root}: {len(found.records)} record(s) verified, {len(found.excluded)} excluded, "
              f"{len(found.unsealed)} of the verified unsealed", file=sys.stderr)
    return 2 if found.excluded or found.unsealed else 0
