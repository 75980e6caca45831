"""What a batch shows while it runs: a bar on a terminal, a plain line per file otherwise."""
from __future__ import annotations

import shutil
import sys
import time


class Progress:
    def __init__(self, total: int, quiet: bool = False, stream=None):
        self.total, self.done, self.quiet = total, 0, quiet
        self.counts = {"ok": 0, "skipped": 0, "failed": 0}
        self.stream = stream or sys.stderr
        self.bar = bool(getattr(self.stream, "isatty", lambda: False)()) and total > 1
        self.start = time.perf_counter()

    def _clear(self):
        if self.bar:
            self.stream.write("\r\033[K")

    def _draw(self):
        if not self.bar:
            return
        width = max(10, min(40, shutil.get_terminal_size().columns - 50))
        fill = int(width * self.done / max(1, self.total))
        rate = self.done / max(1e-9, time.perf_counter() - self.start)
        self.stream.write(f"\r[{'#' * fill}{'.' * (width - fill)}] {self.done}/{self.total} "
                          f"{self.counts['failed']} failed  {rate:.1f} files/s")
        self.stream.flush()

    def line(self, text: str, error: bool = False):
        """A line above the bar: stdout for results, stderr for problems."""
        if self.quiet and not error:
            return
        self._clear()
        print(text, file=sys.stderr if error else sys.stdout, flush=True)
        self._draw()

    def advance(self, status: str):
        self.done += 1
        self.counts[status] = self.counts.get(status, 0) + 1
        self._draw()

    def finish(self) -> float:
        self._clear()
        if self.bar:
            self.stream.flush()
        return time.perf_counter() - self.start
