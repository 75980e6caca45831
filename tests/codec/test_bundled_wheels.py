"""The wheels bundled in the zip (pycryptodome, for encrypted .u3d) load in every supported Blender, 4.2 LTS
to 5.3, on every platform the manifest declares: read from each wheel's own tags (its dist-info WHEEL file)."""
from __future__ import annotations

import re
import tomllib
import zipfile

import build
from tests.conftest import ROOT

# Blender's own Python, by release (the bpy module on PyPI installs on that one only).
BLENDER_PYTHON = {"4.2": (3, 11), "4.5": (3, 11), "5.0": (3, 11), "5.1": (3, 13), "5.2": (3, 13), "5.3": (3, 13)}
# Per Blender platform: the wheel platform family and the machines that load there.
LOADS_ON = {"linux-x64": ("manylinux", {"x86_64"}), "linux-arm64": ("manylinux", {"aarch64"}),
            "macos-x64": ("macosx", {"x86_64", "universal2"}), "macos-arm64": ("macosx", {"arm64", "universal2"}),
            "windows-x64": ("win", {"amd64"})}
# The oldest system Blender 4.2 to 5.3 run on (glibc 2.28, macOS 11.2): a wheel may need nothing newer.
OLDEST = {"manylinux": (2, 28), "macosx": (11, 2), "win": ()}
LEGACY_MANYLINUX = {"manylinux1": (2, 5), "manylinux2010": (2, 12), "manylinux2014": (2, 17)}


def tags(wheel) -> set[tuple[str, str, str]]:
    """(python, abi, platform) for every tag the wheel declares, compressed tag sets expanded."""
    with zipfile.ZipFile(wheel) as z:
        meta = next(n for n in z.namelist() if n.endswith(".dist-info/WHEEL"))
        lines = z.read(meta).decode().splitlines()
    return {(py, abi, plat) for line in lines if line.startswith("Tag: ")
            for tag in [line[5:].strip().split("-")]
            for py in tag[0].split(".") for abi in tag[1].split(".") for plat in tag[2].split(".")}


def python_loads(py: str, abi: str, python: tuple[int, int]) -> bool:
    m = re.fullmatch(r"(cp|py)(\d)(\d*)", py)
    need = (int(m.group(2)), int(m.group(3) or 0))
    if abi == "abi3":                    # the stable ABI: that CPython and every newer 3.x
        return m.group(1) == "cp" and need[0] == python[0] and need <= python
    if abi == "none":
        return need[0] == python[0] and (not m.group(3) or need <= python)
    return abi == f"cp{python[0]}{python[1]}" and need == python


def platform_loads(plat: str, blender_platform: str) -> bool:
    family, machines = LOADS_ON[blender_platform]
    if plat == "win_amd64":
        system, version, machine = "win", (), "amd64"
    else:
        m = re.fullmatch(r"(manylinux|macosx)_(\d+)_(\d+)_(\w+)|(manylinux\d+)_(\w+)", plat)
        if m is None:
            return False
        system, version, machine = ((m.group(1), (int(m.group(2)), int(m.group(3))), m.group(4)) if m.group(1)
                                    else ("manylinux", LEGACY_MANYLINUX[m.group(5)], m.group(6)))
    return system == family and machine in machines and version <= OLDEST[family]


def test_the_supported_releases_are_the_pinned_ones_on_their_own_python():
    assert set(build.BPY_PINS) == set(BLENDER_PYTHON)
    for release, pin in build.BPY_PINS.items():
        assert build.runtime(pin)[0] == "%d.%d" % BLENDER_PYTHON[release], release
    assert set(build.BLENDER_PLATFORMS) == set(LOADS_ON)


def test_the_manifest_and_readme_give_that_range():
    """No upper bound in the manifest: an artist on a newer Blender may install; the README says what is tested."""
    manifest = tomllib.loads((ROOT / "blender_manifest.toml").read_text())
    assert manifest["blender_version_min"] == "4.2.0" and "blender_version_max" not in manifest
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    newest = max(BLENDER_PYTHON, key=lambda r: tuple(map(int, r.split("."))))
    assert readme.count(f"Blender 4.2 LTS to {newest}") == 2, "the README's intro and requirements table"


def test_every_blender_on_every_platform_loads_a_bundled_wheel():
    wheels = build._bundled_wheels(ROOT / "build" / "wheels")
    declared = {w: tags(w) for w in wheels}
    assert all(declared.values()), "a wheel without Tag lines"
    missing = [(platform, release) for platform in build.BLENDER_PLATFORMS
               for release, python in BLENDER_PYTHON.items()
               if not any(python_loads(py, abi, python) and platform_loads(plat, platform)
                          for t in declared.values() for py, abi, plat in t)]
    assert not missing, f"no bundled wheel loads in these Blenders: {missing}"


def test_the_tag_reading_refuses_what_would_not_load():
    """The checks above can fail: a CPython 3.11-only wheel is not Blender 5.1's, nor a newer glibc Blender 4.2's."""
    assert python_loads("cp37", "abi3", (3, 13)) and python_loads("cp311", "cp311", (3, 11))
    assert not python_loads("cp311", "cp311", (3, 13)) and not python_loads("cp314", "abi3", (3, 13))
    assert python_loads("py3", "none", (3, 11))
    assert platform_loads("manylinux2014_aarch64", "linux-arm64") and platform_loads("win_amd64", "windows-x64")
    assert not platform_loads("manylinux_2_34_x86_64", "linux-x64")
    assert platform_loads("macosx_10_9_universal2", "macos-arm64")
    assert not platform_loads("macosx_14_0_arm64", "macos-arm64") and not platform_loads("macosx_11_0_arm64", "macos-x64")
