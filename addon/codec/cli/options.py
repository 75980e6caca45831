"""`-o NAME=VALUE` options, checked against the formats' option dataclasses.

Every value is parsed to the type of its field's default and checked against
the choices or bounds the dataclass declares (option_rules); an unknown name or
a value that does not parse or is not allowed is a UsageError with one line to show.
"""
from __future__ import annotations

import inspect
import re
from dataclasses import MISSING, dataclass, fields

from ..option_rules import bounds, choices

TRUE = ("true", "yes", "on", "1")
FALSE = ("false", "no", "off", "0")


class UsageError(Exception):
    """A mistake on the command line: exit status 2."""


@dataclass(frozen=True)
class OptionField:
    name: str
    type: str          # bool, int, float, str, set
    default: object
    help: str
    choices: tuple = ()            # the only values allowed (a Literal annotation)
    minimum: float | None = None   # inclusive bounds of a number
    maximum: float | None = None

    def allowed(self, sep: str = "|") -> str:
        """What the values may be, for `lgf formats`, the README and errors ("" = any of its type)."""
        if self.type == "set" and self.default:      # a non-empty default holds every choice
            return "any of " + sep.join(sorted(self.default))
        if self.choices:
            return sep.join(map(str, self.choices))
        lo, hi = self.minimum, self.maximum
        if lo is not None and hi is not None:
            return f"{lo} to {hi}"
        return f">= {lo}" if lo is not None else f"<= {hi}" if hi is not None else ""


def _default(f):
    return f.default if f.default is not MISSING else f.default_factory()


def _type_name(value) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (set, frozenset)):
        return "set"
    return type(value).__name__


def _comments(cls: type) -> dict[str, str]:
    """The trailing `# ...` comment of each field, from the dataclass source."""
    try:
        source = inspect.getsource(cls)
    except (OSError, TypeError):
        return {}
    out = {}
    for m in re.finditer(r"^\s+(\w+)\s*:[^\n#]*#\s*(.+)$", source, re.M):
        out[m.group(1)] = m.group(2).strip()
    return out


def describe(cls: type) -> list[OptionField]:
    notes, allowed = _comments(cls), choices(cls)
    return [OptionField(f.name, _type_name(_default(f)), _default(f), f.metadata.get("help") or notes.get(f.name, ""),
                        allowed.get(f.name, ()), *bounds(f))
            for f in fields(cls)]


def show_default(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (set, frozenset)):
        return ",".join(sorted(value)) or '""'
    return repr(value) if isinstance(value, str) and not value else str(value)


def parse_value(field: OptionField, raw: str):
    value = _parse_type(field, raw)
    if field.choices:
        by_text = {str(c).upper(): c for c in field.choices}
        if str(value).upper() not in by_text:
            raise UsageError(f"option {field.name}: {raw!r} is not one of {field.allowed()}")
        return by_text[str(value).upper()]
    lo, hi = field.minimum, field.maximum
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        raise UsageError(f"option {field.name}: {raw!r} is out of range (allowed: {field.allowed()})")
    return value


def _parse_type(field: OptionField, raw: str):
    low = raw.strip().lower()
    if field.type == "bool":
        if low in TRUE:
            return True
        if low in FALSE:
            return False
        raise UsageError(f"option {field.name}: {raw!r} is not a boolean (use true/false, yes/no or 1/0)")
    if field.type in ("int", "float"):
        try:
            return int(raw) if field.type == "int" else float(raw)
        except ValueError:
            raise UsageError(f"option {field.name}: {raw!r} is not {'an integer' if field.type == 'int' else 'a number'}") from None
    if field.type == "set":
        picked = [v.strip() for v in raw.split(",") if v.strip()]
        if not field.default:
            return frozenset(picked)
        # a non-empty default holds every choice: a mistyped one must not silently drop a kind of data
        choices = {c.upper(): c for c in field.default}
        bad = [v for v in picked if v.upper() not in choices]
        if bad:
            raise UsageError(f"option {field.name}: {', '.join(map(repr, bad))} not among {','.join(sorted(choices.values()))}")
        return frozenset(choices[v.upper()] for v in picked)
    return raw


def parse_options(pairs: list[str] | None, classes: list[type]) -> dict:
    """NAME=VALUE strings -> typed values, valid for at least one of `classes`."""
    known: dict[str, list[OptionField]] = {}
    for cls in classes:
        for f in describe(cls):
            known.setdefault(f.name, []).append(f)
    out = {}
    for pair in pairs or []:
        name, eq, raw = pair.partition("=")
        name = name.strip()
        if not eq or not name:
            raise UsageError(f"option {pair!r} must be NAME=VALUE")
        if name not in known:
            valid = ", ".join(sorted(known)) or "none"
            raise UsageError(f"unknown option {name!r}; valid options here: {valid}")
        values = {f.type: parse_value(f, raw) for f in known[name]}
        if len(values) > 1:
            raise UsageError(f"option {name} has different types in the formats involved: {', '.join(values)}")
        out[name] = next(iter(values.values()))
    return out
