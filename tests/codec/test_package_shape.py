"""Every format package has the same shape: the same role modules, and imports that keep the two
directions apart (export never reaches import code, writers never reach readers).

Roles by module name: read / read_* (bytes -> model), write / write_* (model -> bytes), to_scene,
from_scene, *_in (import-only helpers), *_out (export-only helpers), model and conventions (shared
leaves: conventions may import model), options; any other module is a shared helper and is judged by what it reaches.
"""
from __future__ import annotations

import ast
import importlib
from pathlib import Path
from types import ModuleType

import pytest

FORMATS = Path(__file__).resolve().parents[2] / "addon" / "codec" / "formats"
PACKAGES = sorted(p.name for p in FORMATS.iterdir() if (p / "__init__.py").is_file())
ROLE_MODULES = ("__init__", "model", "read", "write", "conventions", "to_scene", "from_scene", "options")

# what a module of each role must never reach, directly or through the package's other modules
FORBIDDEN = {
    "from_scene": {"to_scene", "read", "in"},
    "out": {"to_scene", "read", "in"},
    "to_scene": {"from_scene", "write", "out"},
    "in": {"from_scene", "write", "out"},
    "write": {"read", "to_scene", "from_scene", "in"},
    "read": {"write", "to_scene", "from_scene", "out"},
    "model": {"read", "write", "to_scene", "from_scene", "in", "out", "options", "conventions", "__init__"},
    # conventions may name the model's constants (e.g. a scale per file variant); the model names nothing
    "conventions": {"read", "write", "to_scene", "from_scene", "in", "out", "options", "__init__"},
}


def role(module: str) -> str:
    if module in ("read", "write") or module.startswith(("read_", "write_")):
        return module.split("_")[0]
    if module.endswith("_in") or module.endswith("_out"):
        return module.rsplit("_", 1)[1]
    return module


def package_imports(package: Path) -> dict[str, set[str]]:
    """Each module of the package -> the package's modules it imports (at any depth of its code)."""
    names = {p.stem for p in package.glob("*.py")}
    dotted = f"addon.codec.formats.{package.name}"
    graph: dict[str, set[str]] = {}
    for name in names:
        found: set[str] = set()
        for node in ast.walk(ast.parse((package / f"{name}.py").read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                if node.level == 1 and node.module is None:
                    found |= {a.name for a in node.names if a.name in names}
                elif node.level == 1:
                    found.add(node.module.split(".")[0])
                elif node.level == 0 and node.module and node.module.startswith(dotted + "."):
                    found.add(node.module[len(dotted) + 1:].split(".")[0])
                elif node.level == 0 and node.module == dotted:
                    found |= {a.name for a in node.names if a.name in names}
            elif isinstance(node, ast.Import):
                found |= {a.name[len(dotted) + 1:].split(".")[0] for a in node.names
                          if a.name.startswith(dotted + ".")}
        graph[name] = found & names - {name}
    return graph


def reach(graph: dict[str, set[str]], start: str) -> dict[str, list[str]]:
    """Every module reachable from start, with one import chain that reaches it."""
    paths = {start: [start]}
    todo = [start]
    while todo:
        m = todo.pop()
        for n in sorted(graph.get(m, ())):
            if n not in paths:
                paths[n] = paths[m] + [n]
                todo.append(n)
    del paths[start]
    return paths


def violations(graph: dict[str, set[str]]) -> list[str]:
    bad = []
    for module in sorted(graph):
        banned = FORBIDDEN.get(role(module), set())
        for target, chain in sorted(reach(graph, module).items()):
            if role(target) in banned:
                bad.append(" -> ".join(chain))
    return bad


@pytest.mark.parametrize("package", PACKAGES)
def test_every_role_module_exists(package):
    missing = [m for m in ROLE_MODULES if not (FORMATS / package / f"{m}.py").is_file()]
    assert not missing, f"{package} lacks {missing}"


@pytest.mark.parametrize("package", PACKAGES)
def test_no_direction_named_modules(package):
    old = [p.name for p in (FORMATS / package).glob("*.py") if p.stem.startswith(("export", "import"))]
    assert not old, f"{package}: name helpers for what they are, not export_/import_: {old}"


@pytest.mark.parametrize("package", PACKAGES)
def test_imports_keep_the_directions_apart(package):
    graph = package_imports(FORMATS / package)
    assert graph["from_scene"] and graph["to_scene"]   # the parse found the imports at all
    assert not violations(graph), f"{package}:\n" + "\n".join(violations(graph))
    # the format's conventions are one place that both directions use, not a second copy beside them
    assert "conventions" in reach(graph, "to_scene") and "conventions" in reach(graph, "from_scene")


@pytest.mark.parametrize("package", PACKAGES)
def test_same_in_memory_entry_points(package):
    """The package's role attributes are its modules (no function shadows one), each with one entry point."""
    pkg = importlib.import_module(f"addon.codec.formats.{package}")
    entry = {"read": "parse", "write": "encode_bytes", "to_scene": "to_scene", "from_scene": "from_scene"}
    for module, function in entry.items():
        mod = getattr(pkg, module)
        assert isinstance(mod, ModuleType), f"{package}.{module} is {mod!r}, not the module"
        assert callable(getattr(mod, function, None)), f"{package}.{module} has no {function}()"


def test_the_rules_catch_a_broken_import():
    graph = {"from_scene": {"mesh_out"}, "mesh_out": {"helper"}, "helper": {"to_scene"}, "to_scene": set(),
             "write": {"model"}, "model": set()}
    assert violations(graph) == ["from_scene -> mesh_out -> helper -> to_scene", "mesh_out -> helper -> to_scene"]
    assert violations({"write_v2": {"read_v2"}, "read_v2": set()}) == ["write_v2 -> read_v2"]
    assert violations({"model": {"conventions"}, "conventions": set()}) == ["model -> conventions"]
