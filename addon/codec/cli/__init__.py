"""The codec's command line: `lgf`, `python -m addon.codec`, `blender -c legacy_game_formats`.

Exit status: 0 all good, 1 some files failed, 2 a usage error.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from .. import info
from ..errors import CodecError
from ..registry import find_format, registered_formats
from ..version import version
from . import formats_text, inputs, runners
from .options import UsageError, parse_options
from .progress import Progress

USAGE_ERROR, FILES_FAILED = 2, 1


class _Parser(argparse.ArgumentParser):
    def error(self, message):          # argparse's own usage errors: one line, status 2
        self.exit(USAGE_ERROR, f"{self.prog}: error: {message}\n")


def build_parser(prog: str) -> argparse.ArgumentParser:
    ap = _Parser(prog=prog, description="Convert and check legacy game model files without Blender.",
                 epilog="Exit status: 0 all good, 1 some files failed, 2 usage error.")
    ap.add_argument("--version", action="version", version=f"%(prog)s {version()}")
    sub = ap.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=_Parser)
    opt = dict(action="append", metavar="NAME=VALUE",
               help="an import or export option (see `formats`), e.g. -o password=secret; repeatable")

    p = sub.add_parser("info", help="a file's structure and counts")
    p.add_argument("file")
    p.add_argument("--json", action="store_true", help="one JSON object (the shape DESIGN.md fixes)")
    p.add_argument("-o", "--option", **opt)

    p = sub.add_parser("check", help="parse, rewrite in memory, and compare byte for byte")
    p.add_argument("sources", nargs="+", metavar="SRC", help="files, folders (recursive) or globs")
    _batch_flags(p)
    p.add_argument("-o", "--option", **opt)

    p = sub.add_parser("convert", help="any format to any other: IN OUT, or SRC... --to FORMAT [-d OUTDIR]",
                       description="`convert IN OUT` converts one file, by the extensions. "
                                   "`convert SRC... --to FORMAT -d OUTDIR` converts files, folders (recursive) "
                                   "and globs, mirroring each folder tree under OUTDIR.")
    p.add_argument("sources", nargs="+", metavar="SRC")
    p.add_argument("-t", "--to", metavar="FORMAT", help="target format: a name or an extension (see `formats`)")
    p.add_argument("-d", "--outdir", metavar="OUTDIR", type=Path,
                   help="where the converted trees go (default: beside each input)")
    p.add_argument("--overwrite", action="store_true", help="replace existing outputs, even inputs")
    p.add_argument("--force", action="store_true", help="convert again even when the output is up to date")
    p.add_argument("--dask", metavar="ADDRESS",
                   help="run on a Dask cluster (scheduler address, or `local` for a LocalCluster)")
    _batch_flags(p)
    p.add_argument("-o", "--option", **opt)

    p = sub.add_parser("formats", help="each format's extensions, what it holds, and its options")
    p.add_argument("--json", action="store_true")
    return ap


def _batch_flags(p):
    p.add_argument("-j", "--jobs", type=int, default=None, metavar="N",
                   help="N worker processes (0 = one per CPU; default 1, or one per CPU with --dask local)")
    p.add_argument("--report", type=Path, metavar="FILE", help="write a JSON record per input to FILE")
    p.add_argument("-q", "--quiet", action="store_true", help="only problems and the summary")
    p.add_argument("-v", "--verbose", action="store_true", help="also every warning")


def _target(name: str):
    table = registered_formats()
    low = name.lower()
    if low in table:
        return table[low]
    ext = low if low.startswith((".", "_")) else "." + low
    for spec in table.values():
        if ext in spec.extensions or ext == spec.main_suffix:
            return spec
    raise UsageError(f"unknown format {name!r}; known: "
                     + ", ".join(f"{n} ({'/'.join(s.extensions)})" for n, s in sorted(table.items())))


def _all_option_classes(specs, to=None):
    classes = [s.import_options for s in specs]
    return classes + ([to.export_options] if to is not None else [])


# -- commands --------------------------------------------------------------------
def cmd_info(args) -> int:
    spec = find_format(args.file)
    d = info(args.file, **parse_options(args.option, [spec.import_options]))
    if args.json:
        print(json.dumps(d, indent=1))
        return 0
    print(f"{d['format']} {d['version']}".strip())
    for m in d["meshes"]:
        print(f"  mesh {m['name']!r}: {m['vertices']} vertices, {m['triangles']} triangles, "
              f"{m['materials']} materials, {m['uv_layers']} UV layers, {m['shape_keys']} shape keys")
    print(f"  materials: {', '.join(d['materials']) or '-'}")
    print(f"  bones: {d['bones']}, cameras: {d['cameras']}, lights: {d['lights']}")
    for a in d["animations"]:
        print(f"  animation {a['name']!r}: frames {a['frame_start']}..{a['frame_end']}")
    for w in d["warnings"]:
        print(f"  warning: {w}", file=sys.stderr)
    return 0


def cmd_convert(args) -> int:
    if args.to is None and args.outdir is None:
        if len(args.sources) != 2:
            raise UsageError("convert takes IN OUT, or SRC... with --to FORMAT (and -d OUTDIR)")
        src, out = args.sources
        if Path(src).is_dir():
            raise UsageError(f"{src} is a folder: convert folders with --to FORMAT [-d OUTDIR]")
        try:
            to = find_format(out, for_write=True)
        except CodecError as e:
            raise UsageError(str(e)) from None
        found, missing = inputs.gather([src])
        plans = [inputs.Plan(s, Path(out)) for s in found]
    else:
        if args.to is None:
            raise UsageError("-d OUTDIR needs --to FORMAT")
        to = _target(args.to)
        found, missing = inputs.gather(args.sources, args.outdir, convert=True)
        plans = inputs.plan(found, to, args.outdir)
    options = parse_options(args.option, _all_option_classes({p.source.spec for p in plans}, to))
    tree = args.to is not None
    remote = bool(args.dask) and args.dask != "local"
    where = (lambda p: str(Path(p).resolve())) if remote else str   # paths that mean the same on every worker
    jobs = [{"kind": "convert", "input": where(p.source.path), "output": where(p.output), "to": to.name,
             "options": options, "overwrite": args.overwrite or args.force, "skip_up_to_date": tree and not args.force,
             "clash": p.clash} for p in plans]
    return _batch(args, jobs, missing, "convert")


def cmd_check(args) -> int:
    found, missing = inputs.gather(args.sources)
    options = parse_options(args.option, _all_option_classes({s.spec for s in found}))
    jobs = [{"kind": "check", "input": str(s.path), "options": options} for s in found]
    return _batch(args, jobs, missing, "check")


def _batch(args, jobs: list[dict], missing: list[str], verb: str) -> int:
    dask = getattr(args, "dask", None) or ""
    jobs_wanted = args.jobs if args.jobs is not None else (0 if dask == "local" else 1)
    if jobs_wanted < 0:
        raise UsageError(f"-j {jobs_wanted}: the number of processes cannot be negative")
    workers = jobs_wanted or (os.cpu_count() or 1)
    show = Progress(len(jobs), quiet=args.quiet)
    for m in missing:
        show.line(f"error: {m}", error=True)
    records: list[dict | None] = [None] * len(jobs)
    for i, rec in runners.run(jobs, workers, dask):
        records[i] = rec
        _show(show, verb, rec, args.verbose)
        show.advance(rec["status"])
    seconds = show.finish()
    if args.report:
        args.report.parent.mkdir(parents=True, exist_ok=True)
        args.report.write_text(json.dumps(records, indent=1) + "\n", encoding="utf-8")
    c = show.counts
    if len(jobs) != 1 or missing:
        done = "converted" if verb == "convert" else "identical"
        print(f"{len(jobs)} files: {c['ok']} {done}, {c['skipped']} up to date, {c['failed']} failed"
              + (f", {len(missing)} not found" if missing else "") + f" in {seconds:.1f} s", file=sys.stderr)
    return FILES_FAILED if c["failed"] or missing else 0


def _show(show: Progress, verb: str, rec: dict, verbose: bool) -> None:
    name = rec["input"]
    if verb == "check":
        for f in rec.get("files") or []:
            show.line(f"{'OK  ' if f['ok'] else 'FAIL'} {f['file']}: {f['message']}", error=not f["ok"])
        if rec["status"] == "failed" and not rec.get("files"):
            show.line(f"FAIL {name}: {rec['error']}", error=True)
        return
    if rec["status"] == "failed":
        show.line(f"FAIL {name}: {rec['error']}", error=True)
        return
    if rec["status"] == "skipped":
        show.line(f"up to date: {rec['outputs'][0]}")
        return
    for out in rec["outputs"]:
        show.line(f"wrote {out}")
    if rec["losses"]:
        show.line(f"  {name}: the target format drops {', '.join(rec['losses'])}")
    for w in rec["warnings"] if verbose or show.total == 1 else []:
        show.line(f"warning: {name}: {w}", error=True)
    if rec["warnings"] and not (verbose or show.total == 1):
        show.line(f"  {name}: {len(rec['warnings'])} warnings (-v lists them)")


def cmd_formats(args) -> int:
    print(formats_text.as_json() if args.json else formats_text.as_text())
    return 0


COMMANDS = {"info": cmd_info, "convert": cmd_convert, "check": cmd_check, "formats": cmd_formats}


def main(argv: list[str] | None = None, prog: str = "lgf") -> int:
    try:
        args = build_parser(prog).parse_args(argv)
        return COMMANDS[args.command](args)
    except UsageError as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        return USAGE_ERROR
    except BrokenPipeError:
        # the reader went away (`lgf formats | head`): no traceback, and no second error at exit
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return FILES_FAILED
    except (CodecError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return FILES_FAILED
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
