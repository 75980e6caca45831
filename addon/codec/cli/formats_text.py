"""`lgf formats` and the README's generated reference: one source, the registry and the option dataclasses."""
from __future__ import annotations

import dataclasses
import json

from ..features import FEATURES, HOLDS
from ..registry import registered_formats
from .options import describe, show_default


def _option_sets(spec):
    return [("import", spec.import_options), ("export", spec.export_options)]


def as_text() -> str:
    lines = []
    for name, spec in sorted(registered_formats().items()):
        holds = HOLDS.get(name, frozenset())
        lines.append(f"{name}: {spec.label} ({', '.join(spec.extensions)})")
        if spec.limits.as_text():
            lines.append(f"  limits: {spec.limits.as_text()}")
        lines.append(f"  holds: {', '.join(FEATURES[k][0] for k in FEATURES if k in holds) or '-'}")
        lines.append(f"  drops: {', '.join(FEATURES[k][0] for k in FEATURES if k not in holds) or '-'}")
        for kind, cls in _option_sets(spec):
            opts = describe(cls)
            if not opts:
                lines.append(f"  {kind} options: none")
                continue
            lines.append(f"  {kind} options:")
            for o in opts:
                kind_of = f"{o.type}: {o.allowed()}" if o.allowed() else o.type
                lines.append(f"    {o.name}={show_default(o.default)}  ({kind_of})  {o.help}".rstrip())
    return "\n".join(lines)


def as_json() -> str:
    out = {}
    for name, spec in sorted(registered_formats().items()):
        out[name] = {
            "label": spec.label, "extensions": list(spec.extensions),
            "limits": {k: v for k, v in dataclasses.asdict(spec.limits).items() if v not in (None, "")},
            "holds": [k for k in FEATURES if k in HOLDS.get(name, ())],
            **{f"{kind}_options": [{"name": o.name, "type": o.type, "default": show_default(o.default),
                                    "help": o.help, "choices": list(o.choices), "min": o.minimum,
                                    "max": o.maximum} for o in describe(cls)]
               for kind, cls in _option_sets(spec)},
        }
    return json.dumps(out, indent=1)


def options_markdown() -> str:
    """The README's options reference."""
    lines = ["| format | side | option | type | allowed | default | meaning |", "|---|---|---|---|---|---|---|"]
    for name, spec in sorted(registered_formats().items()):
        for kind, cls in _option_sets(spec):
            for o in describe(cls):
                lines.append(f"| {name} | {kind} | `{o.name}` | {o.type} | {o.allowed(', ') or 'any'} | "
                             f"`{show_default(o.default)}` | "
                             f"{o.help.replace('|', '/')} |")
    return "\n".join(lines)


def losses_markdown() -> str:
    """The README's table of what each target format drops."""
    names = sorted(registered_formats())
    lines = ["| the scene has | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for key, (label, _) in FEATURES.items():
        lines.append(f"| {label} | " + " | ".join("kept" if key in HOLDS.get(n, ()) else "**dropped**"
                                                  for n in names) + " |")
    return "\n".join(lines)
