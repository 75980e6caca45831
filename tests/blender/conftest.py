"""Blender-side tests run inside the real bpy module, on the installed extension zip."""
import re

import pytest

from tests import blender_setup  # noqa: F401  (isolates Blender's user folders before bpy loads)
import bpy  # noqa: E402

_PKG = None


def pytest_configure(config):
    """A deprecation warning from the add-on's own code fails the test that met it: Blender names the API
    a coming release removes, and the difference belongs in the one version helper before artists meet it."""
    config.addinivalue_line("filterwarnings", f"error::DeprecationWarning:{re.escape(blender_setup.PACKAGE)}")


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
