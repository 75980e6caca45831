"""Blender-side tests run inside the real bpy module, on the installed extension zip."""
import pytest

from tests import blender_setup  # noqa: F401  (isolates Blender's user folders before bpy loads)
import bpy  # noqa: E402

_PKG = None


@pytest.fixture(scope="session")
def lgf():
    """The installed extension package (bl_ext.user_default.legacy_game_formats)."""
    global _PKG
    if _PKG is None:
        _PKG = blender_setup.install()
    return _PKG


@pytest.fixture
def clean(lgf):
    """An empty scene before each test."""
    bpy.ops.wm.read_homefile(use_empty=True)
    return bpy.context
