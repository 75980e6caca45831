"""Numpy work on several meshes at once: the calling thread and one kept worker thread share it
(numpy lets go of Python's lock inside its loops, so two cores can work). The worker is made once
and kept: starting a thread costs milliseconds on a busy machine."""
from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Sequence, TypeVar

import numpy as np

T = TypeVar("T")
R = TypeVar("R")

PARALLEL_CORNERS = 100_000      # corners of all meshes: below this, handing work to the other thread costs more than it gives

_WORKER: ThreadPoolExecutor | None = None
_LOCAL = threading.local()      # .busy: this thread is working through a map_two


def map_two(fn: Callable[[T], R], items: Sequence[T], threaded: bool = True) -> list[R]:
    """[fn(x) for x in items], on this thread and the worker, each taking the next item when it is
    free (a slow item does not hold the other thread up); an exception is raised here, the first
    in item order, as the loop would raise it. Called from inside another map_two, it runs as the
    loop: the one worker may be the thread asking, and would wait for itself. threaded=False: the
    loop itself (work too small to hand over)."""
    global _WORKER
    if not threaded or len(items) < 2 or getattr(_LOCAL, "busy", False):
        return [fn(x) for x in items]
    if _WORKER is None:
        _WORKER = ThreadPoolExecutor(1, thread_name_prefix="lgf-numpy")
    results: list = [None] * len(items)
    errors: dict[int, Exception] = {}
    order = iter(range(len(items)))          # shared: next() on it is atomic under Python's lock
    handling = np.geterr()                   # numpy's error handling is the thread's own: the worker takes ours

    def drain() -> None:
        _LOCAL.busy = True
        try:
            with np.errstate(**handling):
                for k in order:
                    try:
                        results[k] = fn(items[k])
                    except Exception as e:          # noqa: BLE001  (raised below, in item order)
                        errors[k] = e
        finally:
            _LOCAL.busy = False

    theirs = _WORKER.submit(drain)
    drain()
    theirs.result()
    if errors:
        raise errors[min(errors)]
    return results


def in_blocks(fn: Callable[[int], None], count: int, size: int) -> None:
    """fn(start) for each block of `size` of `count` rows, two blocks at a time from PARALLEL_CORNERS
    rows on (each block writes only its own rows of the output)."""
    map_two(fn, range(0, count, size), threaded=count >= PARALLEL_CORNERS)
