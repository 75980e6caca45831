"""Which vertex frames an Unreal pair holds: each animation's, laid one after another.

A take is one animation to write (None: frames that belong to none) and
the scene frame numbers it plays. Three cases, for the mesh objects merged:
  - frames the bridge baked per animation (meshes that modifiers deform):
    shape keys listed in Mesh.baked_frames / baked_animation;
  - animations that drive a mesh (shape keys, skin, object motion): each
    replayed on its own by codec.animation;
  - otherwise the shape keys are one timeline (key i = frame i, or the frames
    in baked_frames), and each animation names the range of it it covers.
Laid out, a take whose frames are already written (the sequences inside an
"All" sequence) points at them instead of writing them again.
"""
from __future__ import annotations

import numpy as np

from ... import animation
from ...errors import UnsupportedFeature, Warnings
from ...scene import Animation, Mesh, Scene

BAKED, DRIVEN, TIMELINE = "BAKED", "DRIVEN", "TIMELINE"


def _stack(mesh: Mesh) -> tuple[list[np.ndarray], np.ndarray]:
    """A mesh's frames (shape key i = frame baked_frames[i], else i; no keys = one frame)."""
    stack = [k.positions for k in mesh.shape_keys] if mesh.shape_keys else [mesh.positions]
    numbers = np.asarray(mesh.baked_frames or range(len(stack)), np.int64)
    if len(numbers) != len(stack):
        numbers = np.arange(len(stack))
    return stack, numbers


def _baked(mesh: Mesh) -> np.ndarray | None:
    owner = mesh.baked_animation
    keys = mesh.shape_keys
    if owner and len(owner) == len(keys) == len(mesh.baked_frames):
        return np.asarray(owner, np.int64)
    return None


def drives(scene: Scene, anim: Animation, node: int, mesh: Mesh) -> bool:
    """Does the animation change the mesh: its shape keys, its skin's bones, or the motion of
    the object or its parents?"""
    if node < 0:
        return False
    keys = {f'key_blocks["{k.name}"].value' for k in mesh.shape_keys}
    if any(c.target == node and c.path in keys for c in anim.channels):
        return True
    if mesh.skin is not None and any(0 <= c.target < len(scene.nodes) and c.bone
                                     and scene.nodes[c.target].kind == "ARMATURE"
                                     and scene.nodes[c.target].data == mesh.skin.armature for c in anim.channels):
        return True
    i = node
    while 0 <= i < len(scene.nodes):
        if animation.moves(anim, i):
            return True
        i = scene.nodes[i].parent
    return False


def takes(scene: Scene, pairs: list[tuple[int, Mesh]], options, warnings: Warnings):
    """(mode, [(animation or None, frame numbers)]) for the merged objects, cut to the frame range
    the options ask for."""
    baked = next((_baked(m) for _, m in pairs if _baked(m) is not None), None)
    if baked is not None:
        mesh = next(m for _, m in pairs if _baked(m) is not None)
        numbers = np.asarray(mesh.baked_frames, np.int64)
        mode = BAKED
        out = [(scene.animations[a] if 0 <= a < len(scene.animations) else None, numbers[baked == a])
               for a in dict.fromkeys(baked.tolist())]
    elif scene.animations and any(drives(scene, a, n, m) for a in scene.animations for n, m in pairs):
        mode = DRIVEN
        out = [(a, animation.every_frame(a, warnings).astype(np.int64)) for a in scene.animations]
    else:
        mode = TIMELINE
        numbers = max((_stack(m)[1] for _, m in pairs), key=len)
        out = [(None, numbers)] + [(a, numbers[(numbers >= a.frame_start - 1e-6) & (numbers <= a.frame_end + 1e-6)])
                                   for a in scene.animations]
        out = [(a, n) for a, n in out if len(n)]
    return mode, _in_range(out, options, warnings)


def _in_range(out, options, warnings: Warnings):
    """Every frame, or with `use_scene_range` off frame_start..frame_end by number."""
    if options.use_scene_range:
        return out
    if options.frame_end < options.frame_start:
        raise UnsupportedFeature(f"the end frame {options.frame_end} is before the start frame {options.frame_start}")
    have = np.unique(np.concatenate([n for _, n in out]))
    kept = [(a, n[(n >= options.frame_start) & (n <= options.frame_end)]) for a, n in out]
    kept = [(a, n) for a, n in kept if len(n)]
    if not kept:
        raise UnsupportedFeature(f"frame range {options.frame_start}..{options.frame_end} selects none of the "
                                 f"{len(have)} frames ({have[0]}..{have[-1]})")
    got = len(np.unique(np.concatenate([n for _, n in kept])))
    missing = (options.frame_end - options.frame_start + 1) - got
    if missing:
        warnings.warn(f"frame range {options.frame_start}..{options.frame_end}: {missing} of its frames are "
                      f"not in the scene ({have[0]}..{have[-1]}); writing the {got} that are")
    return kept


def _moved(scene: Scene, anim, node: int, numbers: np.ndarray, pos: np.ndarray) -> np.ndarray:
    """Frames moved by the object's (and its parents') animation relative to its rest placement."""
    if node < 0 or anim is None:
        return pos
    rel = animation.axes.inverse_or_identity(scene.world_matrix(node)) @ animation.world_matrices(scene, anim, node, numbers)
    if np.allclose(rel, np.eye(4), atol=1e-7):
        return pos
    return (np.einsum("fij,fvj->fvi", rel[:, :3, :3], pos) + rel[:, None, :3, 3]).astype(np.float32)


def positions(scene: Scene, node: int, mesh: Mesh, mode: str, anim, numbers: np.ndarray,
              warnings: Warnings) -> np.ndarray:
    """(F, V, 3) float32 the mesh at the take's frames, in the object's rest space."""
    if mode == DRIVEN and node >= 0:
        return animation.mesh_frames(scene, anim, node, numbers)
    stack, own = _stack(mesh)
    owner = _baked(mesh)
    if mode == BAKED and owner is not None:
        index = scene.animations.index(anim) if anim is not None and anim in scene.animations else -1
        pick = np.flatnonzero(owner == index)
        stack, own = [stack[k] for k in pick], own[pick]
    if len(own) > 1 and not np.isin(numbers, own).all():
        warnings.warn(f"mesh {mesh.name!r} has frames {own[0]}..{own[-1]}, not every frame written; "
                      "the nearest earlier frame stands in")
    which = np.clip(np.searchsorted(own, numbers, side="right") - 1, 0, len(stack) - 1)
    pos = np.stack([np.asarray(stack[i], np.float32) for i in which]) if len(stack) else \
        np.zeros((len(numbers), 0, 3), np.float32)
    return _moved(scene, anim if mode == BAKED else None, node, numbers, pos)     # a timeline: nothing moves


def lay_out(per_take: list[tuple[Animation | None, np.ndarray, np.ndarray]]):
    """(3, F, V) float32 frames, and (animation, first file frame, count, first scene frame) per take.
    per_take: (animation, frame numbers, (F, V, 3) positions)."""
    written: list[np.ndarray] = []
    where: dict[bytes, list[int]] = {}
    placed = []
    for a, numbers, pos in per_take:
        start = _find_run(written, where, pos)
        if start < 0:
            start = len(written)
            for f in pos:
                where.setdefault(_fingerprint(f), []).append(len(written))
                written.append(f)
        placed.append((a, start, len(pos), int(numbers[0])))
    out = np.empty((3, len(written), written[0].shape[0] if written else 0), np.float32)   # axis-major per axis
    for i, f in enumerate(written):
        out[:, i] = f.T
    return out, placed


def _fingerprint(frame: np.ndarray) -> bytes:
    """Some 256 of the frame's numbers, spread over it: frames that differ almost always differ
    there too (a match is checked in full). Hashing whole frames cost more than the rest of the lay-out."""
    flat = frame.reshape(-1)
    return flat[::max(1, len(flat) // 256)].tobytes()


def _find_run(written: list[np.ndarray], where: dict[bytes, list[int]], pos: np.ndarray) -> int:
    """The first written frame from which `pos` is already there, frame for frame, or -1."""
    for start in where.get(_fingerprint(pos[0]), []):
        if start + len(pos) <= len(written) and all(
                np.array_equal(written[start + k], pos[k]) for k in range(len(pos))):
            return start
    return -1
