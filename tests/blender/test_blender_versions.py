"""What differs between the supported Blender releases (4.2 LTS to 5.3) stays out of sight of the add-on."""
import re
import warnings

import pytest

import bpy
from tests import blender_setup
from tests.blender.conftest import no_deprecated_api_in_the_add_on

PROBE = blender_setup.USER_DIR / "extension" / "probe.py"


def _run_as_the_add_on(source: str, **names) -> None:
    """Run `source` as if it were a module of the installed extension."""
    exec(compile(source, str(PROBE), "exec"), {"__name__": f"{blender_setup.PACKAGE}.probe", **names})


def test_a_deprecation_warning_from_the_add_on_fails_its_test(lgf, request):
    """Every Blender test runs inside the check; Blender raises its own deprecation warnings (5.x:
    'World.use_nodes' is expected to be removed) in the module that touched the API."""
    assert "deprecations_fail" in request.fixturenames
    with pytest.raises(AssertionError, match=re.escape(f"{PROBE}:1: probe")):
        with no_deprecated_api_in_the_add_on():
            _run_as_the_add_on("warnings.warn('probe', DeprecationWarning)", warnings=warnings)
    if bpy.app.version >= (5, 0, 0):
        with pytest.raises(AssertionError, match="World.use_nodes"):
            with no_deprecated_api_in_the_add_on():
                _run_as_the_add_on("world.use_nodes = True", world=bpy.data.worlds.new("probe"))
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always", DeprecationWarning)
        with no_deprecated_api_in_the_add_on():                  # the tests' own code: passed on, not failed
            warnings.warn("outside the add-on", DeprecationWarning)
    assert [str(w.message) for w in seen] == ["outside the add-on"]
