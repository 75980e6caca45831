"""One error family for every format, and the warnings list that readers return."""
from __future__ import annotations

from dataclasses import dataclass, field


class CodecError(Exception):
    """Base of every error the codec raises on purpose."""


class FormatError(CodecError):
    """The bytes are corrupt, truncated, or not this format.

    `offset` is the byte offset where reading failed, `path` the chunk path
    (e.g. ``MAIN/EDITOR/OBJECT "Box01"/TRIMESH/FACES``), `file` the file name
    when known.
    """

    def __init__(self, message: str, offset: int | None = None, path: str = "", file: str = ""):
        self.message = message
        self.offset = offset
        self.path = path
        self.file = file
        super().__init__(str(self))

    def __str__(self) -> str:
        where = []
        if self.file:
            where.append(self.file)
        if self.offset is not None:
            where.append(f"offset {self.offset} (0x{self.offset:X})")
        if self.path:
            where.append(self.path)
        return f"{self.message} [{', '.join(where)}]" if where else self.message

    def in_file(self, file: str) -> "FormatError":
        self.file = str(file)
        self.args = (str(self),)
        return self


class UnsupportedFeature(CodecError):
    """A valid file that uses something we deliberately do not handle."""


class WrongPassword(CodecError):
    """An encrypted file could not be decrypted with the given password."""


@dataclass
class Warnings:
    """Recoverable oddities, collected instead of printed.

    Identical messages are folded into one with a count, so that a file with
    ten thousand bad indices reports one line.
    """

    items: list[str] = field(default_factory=list)
    _counts: dict[str, int] = field(default_factory=dict, repr=False)

    def warn(self, message: str, offset: int | None = None, path: str = "") -> None:
        text = message
        if offset is not None or path:
            text += f" [{'offset ' + str(offset) if offset is not None else ''}{', ' if offset is not None and path else ''}{path}]"
        if text in self._counts:
            self._counts[text] += 1
            return
        self._counts[text] = 1
        self.items.append(text)

    def extend(self, other: "Warnings | list[str]") -> None:
        for text in (other.as_list() if isinstance(other, Warnings) else other):
            self.warn(text)

    def as_list(self) -> list[str]:
        return [t if self._counts.get(t, 1) == 1 else f"{t} (x{self._counts[t]})" for t in self.items]

    def __len__(self) -> int:
        return len(self.items)

    def __bool__(self) -> bool:
        return bool(self.items)
