"""Run jobs one by one, in a pool of processes, or on a Dask cluster; results come back as they finish.

Workers start once (interpreter, numpy, the codec) and then take file after
file; the work unit is always one file (`work.run_job`).
"""
from __future__ import annotations

import importlib
import multiprocessing
import sys
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Callable, Iterator

from . import work
from .options import UsageError


def _importable_run_job() -> Callable[[dict], dict]:
    """`work.run_job` under a module name a fresh interpreter can import.

    Inside Blender the codec lives under `bl_ext.<repo>.<id>`, which only
    Blender can import; the extension folder itself is a plain package, so
    workers import it from its parent folder instead.
    """
    if not work.__name__.startswith("bl_ext."):
        return work.run_job
    package_dir = Path(work.__file__).resolve().parents[2]
    if str(package_dir.parent) not in sys.path:
        sys.path.insert(0, str(package_dir.parent))
    tail = work.__name__.split(".", 3)[3]            # codec.cli.work
    return importlib.import_module(f"{package_dir.name}.{tail}").run_job


def serial(jobs: list[dict]) -> Iterator[tuple[int, dict]]:
    for i, job in enumerate(jobs):
        yield i, work.run_job(job)


def processes(jobs: list[dict], workers: int) -> Iterator[tuple[int, dict]]:
    fn = _importable_run_job()
    # spawn everywhere: the same behaviour on every system, and safe inside Blender
    ctx = multiprocessing.get_context("spawn")
    pool = ProcessPoolExecutor(max_workers=min(workers, len(jobs)), mp_context=ctx)
    try:
        futures = {pool.submit(fn, job): i for i, job in enumerate(jobs)}
        for f in as_completed(futures):
            yield futures[f], f.result()
    finally:
        # Ctrl+C or a closed pipe: drop the files not started instead of converting them all first
        pool.shutdown(wait=True, cancel_futures=True)


def dask(jobs: list[dict], address: str, workers: int) -> Iterator[tuple[int, dict]]:
    try:
        from distributed import Client, LocalCluster, as_completed as dask_completed
    except ImportError:
        raise UsageError("--dask needs dask.distributed: pip install 'legacy_game_formats[dask]'") from None
    fn = _importable_run_job()
    cluster = None
    if address == "local":
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                               dashboard_address=None)
    try:
        with Client(cluster if cluster is not None else address) as client:
            # one task per file, pure=False: a re-run converts again instead of reusing a cached result
            futures = client.map(fn, jobs, pure=False)
            index = {f.key: i for i, f in enumerate(futures)}
            for f in dask_completed(futures):
                yield index[f.key], f.result()
    finally:
        if cluster is not None:
            cluster.close()


def run(jobs: list[dict], workers: int = 1, dask_address: str = "") -> Iterator[tuple[int, dict]]:
    if dask_address:
        return dask(jobs, dask_address, max(1, workers))
    if workers <= 1 or len(jobs) <= 1:
        return serial(jobs)
    return processes(jobs, workers)
