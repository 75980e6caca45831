"""Vertex-group weights read in bulk equal what the per-vertex API says."""
import numpy as np

import bpy


def test_weight_triples_match_per_vertex_groups(clean, lgf):
    from importlib import import_module
    weights = import_module(f"{lgf.__name__}.bridge.weights")
    bpy.ops.mesh.primitive_uv_sphere_add(segments=16, ring_count=8)
    ob = clean.active_object
    rng = np.random.default_rng(3)
    names = ["root", "arm.L", "Spine 01", "Kopf-ü", "UVMap", "position"]   # the last two shadow attribute names
    for name in names:
        g = ob.vertex_groups.new(name=name)
        for v in rng.choice(len(ob.data.vertices), 20, replace=False):
            g.add([int(v)], float(rng.uniform(0.01, 1.0)), "REPLACE")
    vi, gi, w = weights.weight_triples(clean, ob)
    got = {(int(a), int(b)): float(c) for a, b, c in zip(vi, gi, w)}
    want = {(v.index, g.group): g.weight for v in ob.data.vertices for g in v.groups}
    assert got.keys() == want.keys()
    for key, value in want.items():
        assert abs(got[key] - value) < 1e-6
    assert ".lgf_weights" not in bpy.data.objects and ".lgf_weights" not in bpy.data.node_groups
