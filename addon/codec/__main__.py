"""Blender-free command line: info, check, convert.

    python -m addon.codec info FILE [--json]
    python -m addon.codec check FILE...
    python -m addon.codec convert IN OUT [--option name=value ...]
"""
from __future__ import annotations

import argparse
import json
import sys

from . import check, info, load, save
from .errors import CodecError


def _options(pairs: list[str]) -> dict:
    out = {}
    for pair in pairs or []:
        key, _, raw = pair.partition("=")
        try:
            out[key] = json.loads(raw)
        except ValueError:
            out[key] = raw
    return out


def _print_info(d: dict) -> None:
    print(f"{d['format']} {d['version']}".strip())
    for m in d["meshes"]:
        print(f"  mesh {m['name']!r}: {m['vertices']} vertices, {m['triangles']} triangles, "
              f"{m['materials']} materials, {m['uv_layers']} UV layers, {m['shape_keys']} shape keys")
    print(f"  materials: {', '.join(d['materials']) or '-'}")
    print(f"  bones: {d['bones']}, cameras: {d['cameras']}, lights: {d['lights']}")
    for a in d["animations"]:
        print(f"  animation {a['name']!r}: frames {a['frame_start']}..{a['frame_end']}")
    for w in d["warnings"]:
        print(f"  warning: {w}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m addon.codec", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    p = sub.add_parser("info", help="structure and counts of a file")
    p.add_argument("file")
    p.add_argument("--json", action="store_true")
    p.add_argument("--option", "-o", action="append", metavar="NAME=VALUE")
    p = sub.add_parser("check", help="parse, rewrite, and confirm byte-identical output")
    p.add_argument("files", nargs="+")
    p = sub.add_parser("convert", help="any format to any other, by extension")
    p.add_argument("input")
    p.add_argument("output")
    p.add_argument("--option", "-o", action="append", metavar="NAME=VALUE",
                   help="an import or export option, e.g. -o password=secret -o version=1")
    args = ap.parse_args(argv)

    try:
        if args.command == "info":
            d = info(args.file, **_options(args.option))
            print(json.dumps(d, indent=1)) if args.json else _print_info(d)
            return 0
        if args.command == "check":
            bad = 0
            for f in args.files:
                for r in check(f):
                    print(f"{'OK  ' if r.ok else 'FAIL'} {r.file}: {r.message}")
                    bad += not r.ok
            return 1 if bad else 0
        opts = _options(args.option)
        scene = load(args.input, **opts)
        warnings = list(scene.warnings) + save(scene, args.output, **opts)
        for w in warnings:
            print(f"warning: {w}", file=sys.stderr)
        print(f"wrote {args.output}")
        return 0
    except (CodecError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
