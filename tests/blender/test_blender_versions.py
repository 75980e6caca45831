"""What differs between the supported Blender releases (4.2 LTS to 5.3) stays out of sight of the add-on."""
import warnings

import pytest

import bpy


def test_a_deprecation_warning_from_the_add_on_fails_its_test(lgf):
    """conftest turns deprecation warnings raised in the add-on's modules into errors; Blender's own
    (5.x: 'World.use_nodes' is expected to be removed) are raised in the module that touched the API."""
    probe = {"__name__": f"{lgf.__name__}.probe", "warnings": warnings}
    with pytest.raises(DeprecationWarning, match="probe"):
        exec("warnings.warn('probe', DeprecationWarning)", probe)
    if bpy.app.version >= (5, 0, 0):
        probe["world"] = bpy.data.worlds.new("probe")
        with pytest.raises(DeprecationWarning, match="World.use_nodes"):
            exec("world.use_nodes = True", probe)
    with warnings.catch_warnings(record=True) as seen:             # elsewhere (here) only recorded, as before
        warnings.warn("outside the add-on", DeprecationWarning)
    assert [str(w.message) for w in seen] == ["outside the add-on"]
