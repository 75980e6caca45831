"""Atomic writes: a failed export never leaves a half-written or damaged file."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_atomically(files: dict[Path, bytes]) -> list[Path]:
    """Write every file to a temporary sibling first, then rename them all.

    If anything fails before the renames, no target is touched.
    """
    temps: list[tuple[str, Path]] = []
    try:
        for target, data in files.items():
            target = Path(target)
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
            temps.append((tmp, target))
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
        umask = os.umask(0)
        os.umask(umask)
        for tmp, target in temps:
            # mkstemp makes 0600 files: give them the mode a plain open() would (or the old file's)
            mode = os.stat(target).st_mode & 0o777 if target.exists() else 0o666 & ~umask
            os.chmod(tmp, mode)
            os.replace(tmp, target)
        return [t for _, t in temps]
    finally:
        for tmp, _ in temps:
            if os.path.exists(tmp):
                os.unlink(tmp)
