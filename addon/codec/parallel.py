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
    in item order, as the loop would raise it. Called from inside another map_two, or while the worker
    is still on a begun one, it runs as the loop: the one worker may be the thread asking, and would wait
    for itself. threaded=False: the loop itself (work too small to hand over)."""
    return list(begin_two(fn, items, threaded).in_order())


def begin_two(fn: Callable[[T], R], items: Sequence[T], threaded: bool = True) -> "Begun":
    """map_two with the worker started at once: the caller may do other work before it takes the
    results (Begun.in_order), which it then receives as they come, in item order."""
    return Begun(fn, items, threaded and len(items) >= 2 and not getattr(_LOCAL, "busy", False) and not _TAKEN)


_TAKEN: list = []               # the begun map whose items the worker is still on (at most one)


class Begun:
    """A map_two under way (begin_two): the worker drains items as soon as it is made."""

    def __init__(self, fn: Callable, items: Sequence, threaded: bool) -> None:
        global _WORKER
        self.fn, self.items = fn, items
        self.results: list = [None] * len(items)
        self.errors: dict[int, BaseException] = {}
        self.ready = [threading.Event() for _ in items] if threaded else None
        self.order = iter(range(len(items)))      # shared: next() on it is atomic under Python's lock
        self.stopped = False
        self.theirs = None
        if threaded:
            if _WORKER is None:
                _WORKER = ThreadPoolExecutor(1, thread_name_prefix="lgf-numpy")
            _TAKEN.append(self)
            handling = np.geterr()               # numpy's error handling is the thread's own: the worker takes ours
            self.theirs = _WORKER.submit(self._drain, handling)

    def _take(self) -> bool:
        """Work one item through on this thread; False when none is left."""
        k = None if self.stopped else next(self.order, None)
        if k is None:
            return False
        busy = getattr(_LOCAL, "busy", False)
        _LOCAL.busy = busy or self.ready is not None      # a plain loop leaves the worker free for what it calls
        try:
            self.results[k] = self.fn(self.items[k])
        except BaseException as e:          # noqa: BLE001  (raised by in_order, in item order)
            self.errors[k] = e
        finally:
            _LOCAL.busy = busy
            if self.ready is not None:
                self.ready[k].set()
        return True

    def _drain(self, handling: dict) -> None:
        try:
            with np.errstate(**handling):
                while self._take():
                    pass
        finally:
            _TAKEN.remove(self)

    def in_order(self):
        """The results in item order, each as soon as it is ready (this thread takes items while it
        waits); the first exception in item order is raised when its turn comes, once the worker
        has stopped."""
        try:
            for k in range(len(self.items)):
                if self.ready is None:
                    self._take()
                else:
                    while not self.ready[k].is_set():
                        if not self._take():
                            self.ready[k].wait()
                if k in self.errors:
                    raise self.errors[k]
                yield self.results[k]
        finally:
            self.close()

    def close(self) -> None:
        """Stop: the worker takes no further item; returns once it is done with the one it is on."""
        self.stopped = True
        if self.theirs is not None:
            self.theirs.result()


def in_blocks(fn: Callable[[int], None], count: int, size: int) -> None:
    """fn(start) for each block of `size` of `count` rows, two blocks at a time from PARALLEL_CORNERS
    rows on (each block writes only its own rows of the output)."""
    map_two(fn, range(0, count, size), threaded=count >= PARALLEL_CORNERS)
