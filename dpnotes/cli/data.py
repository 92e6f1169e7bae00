"""``dpnotes data``: list the registered datasets, verify a mirror, fetch a dataset into the cache."""

from __future__ import annotations


def register(sub) -> None:
    p = sub.add_parser("data", help="list, verify and fetch datasets",
                       description="Datasets are looked up in the cache, then in mirror directories "
                       "(--mirror or $DPNOTES_DATA_MIRROR, os.pathsep-separated), then at the "
                       "official URLs; every file is checked against its content checksum.")
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    ls = actions.add_parser("list", help="registered datasets, their files, and whether they are cached")
    ls.add_argument("--cache-dir", metavar="DIR", help="cache (default: $DPNOTES_CACHE or ~/.cache/dpnotes)")
    ls.set_defaults(func=_list)
    v = actions.add_parser("verify", help="check the content checksum of every dataset file in the mirror(s); "
                           "exit 1 if any fails")
    v.add_argument("--mirror", metavar="DIR", action="append",
                   help="mirror directory (repeatable; default: $DPNOTES_DATA_MIRROR)")
    v.set_defaults(func=_verify)
    f = actions.add_parser("fetch", help="copy a dataset, verified, into the cache")
    f.add_argument("name", help="dataset name (see `dpnotes data list`)")
    f.add_argument("--mirror", metavar="DIR", action="append",
                   help="mirror directory (repeatable; default: $DPNOTES_DATA_MIRROR)")
    f.add_argument("--cache-dir", metavar="DIR", help="cache (default: $DPNOTES_CACHE or ~/.cache/dpnotes)")
    f.set_defaults(func=_fetch)
    pk = actions.add_parser("pack", help="split a dataset's mirror files into pieces to carry to another machine")
    pk.add_argument("names", nargs="+", metavar="NAME", help="dataset name(s) (see `dpnotes data list`)")
    pk.add_argument("--into", required=True, metavar="DIR", help="folder for the pieces")
    pk.add_argument("--piece-mib", type=float, default=60, metavar="MIB", help="largest piece in MiB (default 60)")
    pk.add_argument("--mirror", metavar="DIR", action="append",
                    help="mirror directory (repeatable; default: $DPNOTES_DATA_MIRROR)")
    pk.set_defaults(func=_pack)
    up = actions.add_parser("unpack", help="gather pieces made by `pack` into a mirror, joining complete files")
    up.add_argument("src", metavar="SRC", help="folder holding (some of) the pieces")
    up.add_argument("--into", required=True, metavar="DIR", help="the mirror to build (then DPNOTES_DATA_MIRROR=DIR)")
    up.set_defaults(func=_unpack)


def _list(args) -> int:
    from dpnotes.data import cache_root
    from dpnotes.data.registry import datasets

    root = cache_root(args.cache_dir)
    for ds in datasets().values():
        print(f"{ds.name}: {ds.description}")
        for spec in ds.files.values():
            cached = "cached" if (root / ds.name / spec.name).is_file() else "-"
            urls = [u for s in spec.sources for u in s.urls]
            print(f"  {spec.name:28} {cached:7} {urls[0] if urls else 'mirror only'}")
    return 0


def _verify(args) -> int:
    from dpnotes.data import verify

    results = verify(args.mirror)
    if not results:
        print("no registered dataset file found in the mirror(s)")
        return 1
    print(f"{'status':6}  {'dataset':15} {'path':58} detail")
    for r in results:
        print(f"{'OK' if r.ok else 'FAIL':6}  {r.dataset:15} {str(r.path):58} {r.detail}")
    failed = sum(not r.ok for r in results)
    print(f"{len(results) - failed} of {len(results)} files verified")
    return 1 if failed else 0


def _fetch(args) -> int:
    from dpnotes.data import fetch

    for name, path in fetch(args.name, mirror=args.mirror, cache_dir=args.cache_dir).items():
        print(f"{name}: {path}")
    return 0


def _pack(args) -> int:
    from dpnotes.data.pieces import MIB, pack

    for name in args.names:
        written = pack(name, args.into, mirror=args.mirror, piece_bytes=int(args.piece_mib * MIB))
        print(f"{name}: {sum(p.suffix != '.json' for p in written)} piece(s) in {args.into}")
    return 0


def _unpack(args) -> int:
    from dpnotes.data.pieces import unpack

    lines = unpack(args.src, args.into)
    print("\n".join(lines))
    return 0 if all("waiting" not in line for line in lines) else 1
