"""Bench rows for input that must read in linear time: a 1 MB .uc script and a 1 MB 3DS
keyframer section. Each row has its time, a floor (the bare byte work on the same input:
splitting the script into lines; np.frombuffer over the section) and a verdict against the
issue's budget (well under a second)."""
from __future__ import annotations

import tempfile
import time
from pathlib import Path

import numpy as np

BUDGET = 1.0          # seconds


def uc_script(size: int = 1 << 20) -> bytes:
    """Real-looking #exec lines up to `size` bytes, then one line of a single long token."""
    lines = [b"class Big extends Actor;",
             b"#exec MESH IMPORT MESH=Big ANIVFILE=MODELS\\big_a.3d DATAFILE=MODELS\\big_d.3d X=0 Y=0 Z=0"]
    n = 0
    while sum(map(len, lines)) < size // 2:
        lines.append(b"#exec MESH SEQUENCE MESH=Big SEQ=Seq%d STARTFRAME=%d NUMFRAMES=2 RATE=15" % (n, n))
        lines.append(b"#exec MESH NOTIFY MESH=Big SEQ=Seq%d TIME=0.5 FUNCTION=Step // a comment" % n)
        n += 1
    lines.append(b"#exec MESH ORIGIN MESH=Big " + b"x" * (size - sum(map(len, lines))))
    return b"\r\n".join(lines)


def keyframer_3ds(size: int = 1 << 20) -> tuple[bytes, int]:
    """A cube whose node has position, rotation and scale tracks filling about `size` bytes of
    keys (18 + 22 + 18 bytes a frame); also the byte length of the keyframer section."""
    from addon.codec.formats.studio3ds import ids
    from tests.codec import fixtures_3ds as f3ds
    n = size // 58
    frames = np.arange(n)
    rng = np.random.default_rng(0)
    node = f3ds.kf_node(0, "Box")
    node.children = [c for c in node.children if c.cid not in (ids.POS_TRACK, ids.ROT_TRACK, ids.SCL_TRACK)]
    rot = np.column_stack([rng.uniform(-0.2, 0.2, n), rng.normal(size=(n, 3))])
    node.children += [f3ds.track(ids.POS_TRACK, frames, rng.normal(size=(n, 3))),
                      f3ds.track(ids.ROT_TRACK, frames, rot),
                      f3ds.track(ids.SCL_TRACK, frames, np.ones((n, 3)))]
    data = f3ds.build(objects=[f3ds.obj("Box", f3ds.trimesh(f3ds.CUBE_POINTS, f3ds.CUBE_TRIS))],
                      kf_nodes=[node], seg=(0, n))
    return data, n * 58


def _best(fn, repeat: int = 3) -> float:
    out = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return min(out)


def rows_parse(lgf) -> list[tuple[str, float, float]]:
    """(name, time, floor) per row, printed as they come."""
    from importlib import import_module
    ucscript = import_module(f"{lgf.__name__}.codec.formats.unreal.ucscript")
    errors = import_module(f"{lgf.__name__}.codec.errors")
    out = []
    text = uc_script()

    def uc():
        warnings = errors.Warnings()
        script = ucscript.parse(text, warnings)
        ucscript.describe(script, "Big", warnings)
    out.append((f".uc script {len(text) >> 10} KiB (parse + describe)", _best(uc), _best(text.splitlines)))
    data, section = keyframer_3ds()
    path = Path(tempfile.mkdtemp(prefix="lgf-bench-")) / "keys.3ds"
    path.write_bytes(data)
    out.append((f"3DS keyframer {section >> 10} KiB (read + Scene)", _best(lambda: lgf.codec.load(path)),
                _best(lambda: np.frombuffer(data, np.uint8).copy())))
    for name, t, floor in out:
        print(f"  {name:<52} {t * 1000:9.1f} ms  floor {floor * 1000:9.1f} ms  budget {BUDGET * 1000:.0f} ms  "
              f"{'OK' if t < BUDGET else 'TOO SLOW'}", flush=True)
    return out
