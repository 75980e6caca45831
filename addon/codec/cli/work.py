"""The work unit of every runner: one input file, in a worker process or a Dask task.

A job and its record are plain dicts of plain values, so that any executor
can carry them; the record is what `--report` writes.
"""
from __future__ import annotations

import time
from pathlib import Path

from .. import check, encode, load, options_for
from ..features import losses
from ..file_names import unique_name
from ..fileio import write_atomically
from ..registry import find_format


class Refused(Exception):
    """The conversion would overwrite something it must not."""


def _newest(paths) -> float:
    return max((p.stat().st_mtime for p in paths if p.exists()), default=0.0)


def _describe(e: BaseException) -> str:
    if isinstance(e, Refused):
        return str(e)
    if isinstance(e, OSError) and e.strerror:
        return f"{e.strerror}: {e.filename}" if e.filename else e.strerror
    return f"{type(e).__name__}: {e}"


def _file_stem(part: str) -> str:
    """A part's name (from the file's contents) as a file name: no folders, no leading dot."""
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in part) or "part"


def convert_job(job: dict) -> dict:
    """job: input, output, to (format name), options, overwrite, skip_up_to_date, clash."""
    start = time.perf_counter()
    rec = {"input": job["input"], "format": "", "to": job["to"], "status": "failed", "outputs": [], "warnings": [],
           "losses": [], "seconds": 0.0, "error": None}
    try:
        if job.get("clash"):
            raise Refused(job["clash"])
        src, out = Path(job["input"]), Path(job["output"])
        spec = find_format(src)
        rec["format"] = spec.name
        to = find_format(out, name=job["to"])
        options = job.get("options", {})
        # a file of several parts (a script's meshes) gives one output per part, named after it (two parts
        # whose names make one file name get _2, _3 ...)
        parts = spec.parts(src) if spec.part_option and not options.get(spec.part_option) else []
        taken: set[str] = set()
        outs = [(to.main_output(out.parent, unique_name(_file_stem(p), taken)), {**options, spec.part_option: p})
                for p in parts] if len(parts) > 1 else [(out, options)]
        # every part's own files (a data file animated by several scripts has an animation file per part)
        inputs = {src.resolve(), *(p.resolve() for _, o in outs
                                   for p in [*spec.sources(src, options_for(spec.import_options, o)),
                                             *spec.companions(src)])}
        made = [p for o, _ in outs for p in to.written(o)]
        if job.get("skip_up_to_date") and all(p.exists() and p.resolve() not in inputs for p in made) \
                and min(p.stat().st_mtime for p in made) >= _newest(inputs):
            rec.update(status="skipped", outputs=[str(p) for p in made])
            return rec
        files, warnings, scenes = {}, [], []
        for o, opts in outs:
            scene = load(src, with_companions=True, **opts)
            encoded, said = encode(scene, o, job["to"], **opts)
            files.update(encoded)
            warnings += list(scene.warnings) + said
            scenes.append(scene)
        if not job.get("overwrite"):
            for p in files:
                if p.resolve() in inputs:
                    raise Refused(f"refusing to overwrite the input {p} (use --overwrite)")
                if p.exists():
                    raise Refused(f"refusing to overwrite {p}, which exists (use --overwrite)")
        written = write_atomically(files)
        rec.update(status="ok", outputs=[str(p) for p in written], warnings=warnings,
                   losses=list(dict.fromkeys(x for sc in scenes for x in losses(sc, job["to"]))))
    except Exception as e:     # noqa: BLE001  a bad file is reported and the batch goes on
        rec["error"] = _describe(e)
    finally:
        rec["seconds"] = round(time.perf_counter() - start, 4)
    return rec


def check_job(job: dict) -> dict:
    """Parse, rewrite in memory and compare: one record per input, a line per file it read."""
    start = time.perf_counter()
    rec = {"input": job["input"], "status": "failed", "outputs": [], "warnings": [], "losses": [],
           "seconds": 0.0, "error": None, "files": []}
    try:
        results = check(job["input"], **job.get("options", {}))
        rec["files"] = [{"file": r.file, "ok": r.ok, "message": r.message} for r in results]
        bad = [r for r in results if not r.ok]
        rec["status"] = "failed" if bad else "ok"
        rec["error"] = "; ".join(f"{r.file}: {r.message}" for r in bad) or None
    except Exception as e:     # noqa: BLE001
        rec["error"] = _describe(e)
    finally:
        rec["seconds"] = round(time.perf_counter() - start, 4)
    return rec


JOBS = {"convert": convert_job, "check": check_job}


def run_job(job: dict) -> dict:
    return JOBS[job["kind"]](job)
