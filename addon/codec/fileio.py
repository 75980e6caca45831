"""Atomic writes: a failed export never leaves a half-written or damaged file."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_atomically(files: dict[Path, bytes | list]) -> list[Path]:
    """Write every file to a temporary sibling first, then rename them all. A file's data is bytes-like, or a
    list of bytes-like pieces written one after another (a file of hundreds of MB is never joined in memory).

    If anything fails before the renames, no target is touched. No fsync: the rename is what
    keeps a failed export from damaging a file; flushing to the disk (a millisecond or more per
    file, most of a small export's) is left to the system, as Blender's own .blend save does.
    """
    temps: list[tuple[str, Path]] = []
    try:
        for target, data in files.items():
            target = Path(target)
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
            temps.append((tmp, target))
            with os.fdopen(fd, "wb") as fh:
                if isinstance(data, list):
                    fh.writelines(data)
                else:
                    fh.write(data)
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


# Windows device names: opening "CON.pcx" there reads the console, so they never name a file.
_RESERVED = {"CON", "PRN", "AUX", "NUL", *(f"COM{i}" for i in range(1, 10)), *(f"LPT{i}" for i in range(1, 10))}


def usable_name(name: str) -> bool:
    """False for a file name that a file's contents gave us and that no OS can open:
    empty, over 255 bytes, holding NUL, or a Windows device name."""
    if not name or "\0" in name or len(name.encode("utf-8", "surrogateescape")) > 255:
        return False
    return name.split(".", 1)[0].rstrip(" ").upper() not in _RESERVED


def is_file(path: str | Path) -> bool:
    """Path.is_file(), but False (never OSError or ValueError) for names the OS rejects."""
    return _test(path, Path.is_file)


def is_dir(path: str | Path) -> bool:
    return _test(path, Path.is_dir)


def _test(path: str | Path, test) -> bool:
    p = Path(path)
    try:
        return usable_name(p.name) and test(p)
    except (OSError, ValueError):
        return False
