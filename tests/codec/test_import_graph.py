"""The layers of addon/, read from the source with ast (nothing is imported):

- no import cycle between modules (imports inside functions count: they only hide a cycle);
- `bpy` is imported only by the bridge, the operators and addon/__init__.py, and `bpy.data`
  is used only by the bridge;
- the codec imports neither bpy, bpy_extras nor mathutils;
- operators import only the codec's and the bridge's public API (the packages themselves, and
  the command line's entry point codec.cli, which `blender -c` runs);
- no module imports a `_`-prefixed name, or a `_`-prefixed module, from another package;
- nothing outside codec/formats imports a format package: the registry finds them, and what the
  other layers need of a format comes through its FormatSpec.

Each rule is also run on a small tree that breaks it, so that a rule that stops seeing
its violation fails here too.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import ROOT

BLENDER_ONLY = {"bpy", "bpy_extras", "mathutils", "bmesh", "gpu", "idprop"}


@dataclass(frozen=True)
class Import:
    source: str        # the importing module, dotted ("addon.bridge.collect")
    target: str        # the imported module ("addon.codec.scene"), or an outside top-level name ("bpy")
    name: str          # the name taken from it ("" for a whole module)
    line: int


def module_names(root: Path, top: str) -> dict[str, Path]:
    """Dotted module name -> file, for every .py under root/top (a package's name is its __init__)."""
    out = {}
    for path in sorted((root / top).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _is_package(modules: dict[str, Path], name: str) -> bool:
    return name in modules and modules[name].name == "__init__.py"


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> tuple[list[Import], list[int]]:
    """Every import in the file (at any depth), and the lines that use `bpy.data`."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = name if _is_package(modules, name) else name.rpartition(".")[0]
    found, data_lines = [], []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                found.append(Import(name, a.name if a.name in modules else a.name.split(".")[0], "", node.lineno))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base_parts = package.split(".")
                base_parts = base_parts[:len(base_parts) - (node.level - 1)]
                base = ".".join(base_parts + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            if base not in modules:                   # outside addon/: keep the top-level name
                # a module of ours that only a build writes (codec._version) keeps its full name
                top = base if node.level or base.split(".")[0] in {m.split(".")[0] for m in modules} \
                    else base.split(".")[0]
                found += [Import(name, top, a.name, node.lineno) for a in node.names]
                if base == "bpy" and any(a.name == "data" for a in node.names):
                    data_lines.append(node.lineno)
                continue
            for a in node.names:
                sub = f"{base}.{a.name}"
                if sub in modules:                    # `from . import props`: the module itself
                    found.append(Import(name, sub, "", node.lineno))
                else:
                    found.append(Import(name, base, a.name, node.lineno))
        elif (isinstance(node, ast.Attribute) and node.attr == "data" and isinstance(node.value, ast.Name)
              and node.value.id == "bpy"):
            data_lines.append(node.lineno)
    return found, data_lines


def graph(root: Path, top: str = "addon") -> tuple[dict[str, Path], list[Import], dict[str, list[int]]]:
    modules = module_names(root, top)
    edges, data = [], {}
    for name, path in modules.items():
        found, lines = imports_of(name, path, modules)
        edges += found
        if lines:
            data[name] = lines
    return modules, edges, data


def cycles(modules: dict[str, Path], edges: list[Import]) -> list[list[str]]:
    """Strongly connected components of more than one module, and modules that import themselves (Tarjan)."""
    succ: dict[str, set[str]] = {m: set() for m in modules}
    for e in edges:
        if e.target in modules:
            succ[e.source].add(e.target)
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(succ[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1 or v in succ[v]:
                out.append(sorted(comp))

    for v in sorted(modules):
        if v not in index:
            visit(v)
    return out


def _layer(module: str, top: str) -> str:
    """"codec", "bridge", "operators" or "" (the add-on's own __init__)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _package_of(module: str, modules: dict[str, Path]) -> str:
    return module if _is_package(modules, module) else module.rpartition(".")[0]


def violations(root: Path, top: str = "addon") -> list[str]:
    modules, edges, data = graph(root, top)
    out = [f"import cycle: {' -> '.join(c)}" for c in cycles(modules, edges)]
    for e in edges:
        where = f"{modules[e.source].relative_to(root)}:{e.line}"
        layer = _layer(e.source, top)
        if e.target in BLENDER_ONLY and layer not in ("bridge", "operators", ""):
            out.append(f"{where}: {e.target} imported outside the bridge and the operators")
        if layer == "operators" and e.target in modules and _layer(e.target, top) != "operators" \
                and e.target not in (f"{top}.codec", f"{top}.codec.cli", f"{top}.bridge"):
            out.append(f"{where}: operators use the public API of {top}.codec (and .cli) and {top}.bridge only, "
                       f"not {e.target}")
        formats = f"{top}.codec.formats."
        if e.target.startswith(formats) and not e.source.startswith(formats):
            out.append(f"{where}: {e.target} is a format's own module (use its FormatSpec)")
        if e.target in modules and _package_of(e.target, modules) != _package_of(e.source, modules):
            private_module = any(p.startswith("_") for p in e.target.split(".")[1:])
            if private_module or (e.name.startswith("_") and not e.name.startswith("__")):
                out.append(f"{where}: {e.target}{'.' + e.name if e.name else ''} is private to its package")
    for module, lines in data.items():
        if _layer(module, top) != "bridge":
            out += [f"{modules[module].relative_to(root)}:{n}: bpy.data used outside the bridge" for n in lines]
    return list(dict.fromkeys(out))


def test_the_addon_keeps_its_layers():
    found = violations(ROOT)
    assert not found, "\n".join(found)


def test_the_graph_sees_the_addon():
    """The walk finds the layers and the edges between them (an empty graph passes every rule)."""
    modules, edges, data = graph(ROOT)
    assert {"addon.codec", "addon.bridge", "addon.operators", "addon.bridge.collect"} <= set(modules)
    pairs = {(e.source, e.target) for e in edges}
    assert ("addon.bridge.collect", "addon.codec.scene") in pairs
    assert any(s.startswith("addon.operators.") and t == "addon.bridge" for s, t in pairs)
    assert set(data) and all(m.startswith("addon.bridge.") for m in data)


# one small tree per rule: the rule must name the violation it plants
BROKEN = {
    "cycle": ({"bridge/a.py": "from . import b\n", "bridge/b.py": "def f():\n    from .a import x\n"},
              "import cycle: addon.bridge.a -> addon.bridge.b"),
    "bpy in codec": ({"codec/x.py": "import bpy\n"}, "bpy imported outside"),
    "mathutils in codec": ({"codec/x.py": "from mathutils import Matrix\n"}, "mathutils imported outside"),
    "bpy.data in operators": ({"operators/x.py": "import bpy\n\ndef f():\n    return bpy.data.objects\n"},
                              "bpy.data used outside the bridge"),
    "from bpy import data": ({"operators/x.py": "from bpy import data\n"}, "bpy.data used outside the bridge"),
    "format internals in operators": ({"operators/x.py": "from ..codec.formats.f.write import LIMIT\n",
                                       "codec/formats/f/write.py": "LIMIT = 1\n"},
                                      "not addon.codec.formats.f.write"),
    "format module in the bridge": ({"bridge/x.py": "from ..codec.formats.f.write import LIMIT\n",
                                     "codec/formats/f/write.py": "LIMIT = 1\n"},
                                    "addon.codec.formats.f.write is a format's own module"),
    "bridge module in operators": ({"operators/x.py": "from ..bridge import collect\n",
                                    "bridge/collect.py": ""}, "not addon.bridge.collect"),
    "private name across packages": ({"bridge/x.py": "from ..codec.scene import _helper\n",
                                      "codec/scene.py": "def _helper(): pass\n"},
                                     "addon.codec.scene._helper is private"),
    "private module across packages": ({"bridge/x.py": "from ..operators import _scaffold\n",
                                        "operators/_scaffold.py": ""}, "addon.operators._scaffold is private"),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_each_rule_catches_its_violation(tmp_path, case):
    files, expected = BROKEN[case]
    for pkg in ("", "codec", "codec/formats", "codec/formats/f", "bridge", "operators"):
        (tmp_path / "addon" / pkg).mkdir(parents=True, exist_ok=True)
        (tmp_path / "addon" / pkg / "__init__.py").touch()
    for rel, text in files.items():
        (tmp_path / "addon" / rel).write_text(text)
    found = violations(tmp_path)
    assert any(expected in v for v in found), found


def test_a_clean_tree_passes(tmp_path):
    """The rules allow what the layers are meant to do."""
    for pkg in ("", "codec", "bridge", "operators"):
        (tmp_path / "addon" / pkg).mkdir(parents=True, exist_ok=True)
    (tmp_path / "addon" / "__init__.py").write_text("def register():\n    import bpy\n")
    (tmp_path / "addon" / "codec" / "__init__.py").write_text("from .scene import Scene\n")
    (tmp_path / "addon" / "codec" / "scene.py").write_text("import numpy\nclass Scene: pass\n")
    (tmp_path / "addon" / "bridge" / "__init__.py").write_text("from .build import build\n")
    (tmp_path / "addon" / "bridge" / "build.py").write_text(
        "import bpy\nfrom ..codec.scene import Scene\n\ndef build():\n    return bpy.data.objects\n")
    (tmp_path / "addon" / "operators" / "__init__.py").write_text("from . import _scaffold\n")
    (tmp_path / "addon" / "operators" / "_scaffold.py").write_text(
        "import bpy\nfrom bpy.props import BoolProperty\nfrom .. import bridge, codec\n")
    assert violations(tmp_path) == []
