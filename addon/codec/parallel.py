"""Numpy work on several meshes at once: the calling thread and one kept worker thread share it
(numpy lets go of Python's lock inside its loops, so two cores can work). The worker is made once
and kept: starting a thread costs milliseconds on a busy machine."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Sequence, TypeVar

T = TypeVar("T")
R = TypeVar("R")

_WORKER: ThreadPoolExecutor | None = None


def map_two(fn: Callable[[T], R], items: Sequence[T]) -> list[R]:
    """[fn(x) for x in items], every other item on the worker thread; an exception is raised here,
    as the loop would raise it (the first in item order)."""
    global _WORKER
    if len(items) < 2:
        return [fn(x) for x in items]
    if _WORKER is None:
        _WORKER = ThreadPoolExecutor(1, thread_name_prefix="lgf-numpy")
    theirs = [_WORKER.submit(fn, x) for x in items[1::2]]
    out: list = []
    error = None
    for k, x in enumerate(items[0::2]):
        try:
            out.append(fn(x))
        except Exception as e:              # noqa: BLE001  (kept until the worker's earlier items are known)
            error = error or (2 * k, e)
            out.append(None)
    results: list = [None] * len(items)
    results[0::2] = out
    for k, f in enumerate(theirs):
        try:
            results[2 * k + 1] = f.result()
        except Exception as e:              # noqa: BLE001
            if error is None or 2 * k + 1 < error[0]:
                error = (2 * k + 1, e)
    if error is not None:
        raise error[1]
    return results
