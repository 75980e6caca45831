"""A mutation fuzzer over every format's whole import path, Blender-free.

    python3 build.py fuzz [--minutes M] [--format F] [--seed S] [--save DIR]

Seeds are the files in test_assets/ (plus a .uc script, a PCX skin and a
v1 .u3d made here, which the assets lack). Each input is one seed with one to
four mutations: bit flips, truncation, insertion, deletion, interesting
integers over count and length fields, 3DS chunk-tree surgery, .uc text damage
and splices with another seed. It runs in a worker process through
read -> Scene -> info -> check (rewrite) -> save -> convert (read again as
`lgf convert` reads, and encoded in memory to every other format that holds
some of it), with a time alarm and a memory cap. Anything but a CodecError, a
stage (or one conversion) over TIME_LIMIT seconds, an allocation over the cap,
or a Scene mesh whose arrays do not fit together is a failure: it is minimized
and saved under tests/fuzz_cases/, which tests/codec/test_fuzz_cases.py
replays.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import multiprocessing as mp
import os
import random
import re
import shutil
import struct
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

ASSETS = ROOT / "test_assets"
CASES = ROOT / "tests" / "fuzz_cases"
CONVERTED = 0                       # conversions the last input made (the worker reports them)
TIME_LIMIT = 2.0                    # seconds per input, and again per conversion (the issue's hang limit)
HARD_LIMIT = 30.0                   # the worker is killed when even the alarm cannot stop it
MEMORY_FLOOR = 128 << 20            # bytes any input may allocate, above what the worker already holds
MEMORY_PER_BYTE = 64                # ... plus this many bytes per input byte
INTERESTING = [0, 1, 2, 3, 4, 7, 8, 15, 16, 31, 32, 63, 64, 127, 128, 255, 256, 0x3FFF, 0x4000, 0x7FFF,
               0x8000, 0xFFFE, 0xFFFF, 0x10000, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFE, 0xFFFFFFFF]

UC_SEED = (
    "//=== Box: a fuzzing seed\r\nclass Box extends Actor;\r\n\r\n"
    "#exec MESH IMPORT MESH=Box ANIVFILE=MODELS\\box_a.3d DATAFILE=MODELS\\box_d.3d X=0 Y=0 Z=0\r\n"
    "#exec MESH ORIGIN MESH=Box X=0 Y=0 Z=0 YAW=64 PITCH=0 ROLL=0\r\n"
    "#exec MESH SEQUENCE MESH=Box SEQ=All STARTFRAME=0 NUMFRAMES=2\r\n"
    "#exec MESH SEQUENCE MESH=Box SEQ=Walk STARTFRAME=1 NUMFRAMES=1 RATE=15 GROUP=Moving\r\n"
    "#exec MESH NOTIFY MESH=Box SEQ=Walk TIME=0.5 FUNCTION=Step\r\n"
    "#exec TEXTURE IMPORT NAME=JBox1 FILE=MODELS\\box.pcx GROUP=Skins FLAGS=2\r\n"
    "#exec MESHMAP NEW MESHMAP=Box MESH=Box\r\n"
    "#exec MESHMAP SCALE MESHMAP=Box X=0.1 Y=0.1 Z=0.2\r\n"
    "#exec MESHMAP SETTEXTURE MESHMAP=Box NUM=0 TEXTURE=JBox1\r\n"
    "\r\ndefaultproperties\r\n{\r\n    Mesh=Box\r\n}\r\n"
).encode("latin-1")


# ---------------------------------------------------------------------------
# Cases: the files of one input, the one that is read, and the options
# ---------------------------------------------------------------------------
@dataclass
class Case:
    fmt: str
    files: dict[str, bytes]                 # file name -> bytes, all written into one folder
    entry: str                              # the file given to codec.load
    victim: str                             # the file the mutations damage
    options: dict = field(default_factory=dict)

    def write(self, folder: Path) -> Path:
        for name, data in self.files.items():
            (folder / name).write_bytes(data)
        return folder / self.entry

    def with_victim(self, data: bytes) -> "Case":
        return Case(self.fmt, {**self.files, self.victim: data}, self.entry, self.victim, dict(self.options))


def _v1_u3d() -> bytes:
    from addon import codec
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "cube_v1.u3d"
        codec.save(codec.load(ASSETS / "ultimate3d" / "skinned_v2.u3d"), out, version="1.0")
        return out.read_bytes()


def seeds() -> dict[str, list[Case]]:
    """Every format's seed cases, keyed by the fuzzer's format names."""
    from tests.codec.unreal_fixtures import pcx_skin
    out: dict[str, list[Case]] = {}
    out["3ds"] = [Case("3ds", {p.name: p.read_bytes()}, p.name, p.name)
                  for p in sorted((ASSETS / "3ds").glob("*")) if p.suffix.lower() == ".3ds" and p.stat().st_size > 17]
    unreal = []
    for stem in ("box", "mar_rifle"):
        d, a = (ASSETS / "unreal" / f"{stem}_d.3d").read_bytes(), (ASSETS / "unreal" / f"{stem}_a.3d").read_bytes()
        for victim in ("_d.3d", "_a.3d"):
            unreal.append(Case("unreal", {f"{stem}_d.3d": d, f"{stem}_a.3d": a}, f"{stem}_d.3d", stem + victim))
    box = {"box_d.3d": (ASSETS / "unreal" / "box_d.3d").read_bytes(),
           "box_a.3d": (ASSETS / "unreal" / "box_a.3d").read_bytes(), "Box.uc": UC_SEED, "box.pcx": pcx_skin()}
    for victim in ("Box.uc", "Box.uc", "box.pcx", "box_a.3d"):
        unreal.append(Case("unreal", dict(box), "Box.uc", victim))
    out["unreal"] = unreal
    out["unigine-mesh"] = [Case("unigine-mesh", {p.name: p.read_bytes()}, p.name, p.name)
                           for p in sorted((ASSETS / "unigine").glob("*.mesh"))]
    rest = (ASSETS / "unigine" / "tube_skinned.mesh").read_bytes()
    out["unigine-anim"] = [Case("unigine-anim", {p.name: p.read_bytes(), "rest.mesh": rest}, p.name, victim,
                                {"rest_mesh": "rest.mesh"})
                           for p in sorted((ASSETS / "unigine").glob("*.anim")) for victim in (p.name, p.name, "rest.mesh")]
    out["u3d"] = [Case("u3d", {p.name: p.read_bytes()}, p.name, p.name)
                  for p in sorted((ASSETS / "ultimate3d").glob("*.u3d"))]
    out["u3d"].append(Case("u3d", {"cube_v1.u3d": _v1_u3d()}, "cube_v1.u3d", "cube_v1.u3d"))
    out["glb"], out["gltf"] = _gltf_seeds()
    return out


def _gltf_seeds() -> tuple[list[Case], list[Case]]:
    """Hand-built glTF files (tests/codec/gltf_read_fixtures.py): a textured quad with a camera and a
    light, and a skinned, morphing strip with animations; as .glb, and as .gltf with a data: URI or
    a .bin beside it (either file damaged)."""
    from tests.codec import gltf_read_fixtures as G
    glb = [Case("glb", {"quad.glb": G.full().glb()}, "quad.glb", "quad.glb"),
           Case("glb", {"rig.glb": G.skinned().glb()}, "rig.glb", "rig.glb")]
    text, files = G.skinned().gltf("rig.bin")
    gltf = [Case("gltf", {"rig.gltf": text, **files}, "rig.gltf", victim)
            for victim in ("rig.gltf", "rig.gltf", "rig.gltf", "rig.bin")]
    gltf.append(Case("gltf", {"quad.gltf": G.full().gltf()[0]}, "quad.gltf", "quad.gltf"))
    return glb, gltf


# ---------------------------------------------------------------------------
# Mutations
# ---------------------------------------------------------------------------
def _flip(rng: random.Random, b: bytearray, _: Case, __) -> None:
    for _ in range(rng.randint(1, 8)):
        if b:
            b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)


def _truncate(rng, b, _, __) -> None:
    if b:
        del b[rng.randrange(len(b)):]


def _insert(rng, b, _, __) -> None:
    at = rng.randint(0, len(b))
    if b and rng.random() < 0.5:
        lo = rng.randrange(len(b))
        piece = b[lo:lo + rng.randint(1, 256)] * rng.randint(1, 4)
    else:
        piece = bytes(rng.randrange(256) for _ in range(rng.randint(1, 64)))
    b[at:at] = piece


def _delete(rng, b, _, __) -> None:
    if b:
        lo = rng.randrange(len(b))
        del b[lo:lo + rng.randint(1, 64)]


def _integer(rng, b, _, __) -> None:
    """An interesting value (or the old one nudged) over a u8/u16/u32 field, often aligned."""
    width = rng.choice((1, 2, 2, 4, 4))
    if len(b) < width:
        return
    at = rng.randrange(len(b) - width + 1)
    if rng.random() < 0.5:
        at -= at % width
    fmt = {1: "<B", 2: "<H", 4: "<I"}[width]
    old = struct.unpack_from(fmt, b, at)[0]
    value = rng.choice(INTERESTING) if rng.random() < 0.7 else old + rng.choice((-1, 1, 2, -2, old, 16, -16))
    struct.pack_into(fmt, b, at, value % (1 << (8 * width)))


_FLOATS = [0.0, -0.0, float("nan"), float("inf"), -float("inf"), 1e38, -1e38, 1e-38, -1.0, 65536.0]


def _float(rng, b, _, __) -> None:
    """An interesting float (zero, NaN, infinity, huge, tiny) over an aligned 4-byte field."""
    if len(b) >= 4:
        at = rng.randrange(len(b) - 3)
        at -= at % rng.choice((1, 2, 4, 4, 4))
        struct.pack_into("<f", b, at, rng.choice(_FLOATS))


def _chunks_3ds(data: bytes) -> list[tuple[int, int, list[int]]]:
    """(offset, length, ancestor offsets) of every chunk a clean walk finds."""
    out = []

    def walk(pos: int, end: int, parents: list[int], depth: int) -> None:
        while pos + 6 <= end and depth < 16:
            _, length = struct.unpack_from("<HI", data, pos)
            if length < 6 or pos + length > end:
                return
            out.append((pos, length, parents))
            walk(pos + 6, pos + length, parents + [pos], depth + 1)
            pos += length

    walk(0, len(data), [], 0)
    return out


def _surgery_3ds(rng, b: bytearray, case: Case, _) -> None:
    """Delete, duplicate or swap whole chunks, keeping (or not) the ancestors' lengths right,
    or give a chunk a lying length."""
    chunks = _chunks_3ds(bytes(b))
    if not chunks:
        return _integer(rng, b, case, _)
    pos, length, parents = rng.choice(chunks)
    op = rng.choice(("delete", "duplicate", "swap", "length"))
    if op == "length":
        struct.pack_into("<I", b, pos + 2, rng.choice(INTERESTING + [length + 1, length - 1, length * 2]) % (1 << 32))
        return
    if op == "swap":
        sibs = [c for c in chunks if c[2] == parents and c[0] != pos]
        if sibs:
            p2, l2, _ = rng.choice(sibs)
            (a, la), (c, lc) = sorted(((pos, length), (p2, l2)))
            if a + la <= c:
                b[a:c + lc] = b[c:c + lc] + b[a + la:c] + b[a:a + la]
        return
    delta = -length if op == "delete" else length
    piece = bytes(b[pos:pos + length])
    if op == "delete":
        del b[pos:pos + length]
    else:
        b[pos + length:pos + length] = piece
    if rng.random() < 0.8:
        for p in parents:
            old = struct.unpack_from("<I", b, p + 2)[0]
            struct.pack_into("<I", b, p + 2, (old + delta) % (1 << 32))


_UC_DAMAGE = [b"a" * 20000, b"=" * 5000, b'"', b" " * 10000, b"#exec ", b"\r\n#exec MESH SEQUENCE MESH=Box SEQ=",
              b"NUMFRAMES=99999999", b"STARTFRAME=-5", b"X=nan", b"RATE=1e999", b"NUM=256", b"//", b"\0",
              b"\r\n#exec MESH IMPORT MESH=Box ANIVFILE=" + b"x" * 300 + b" DATAFILE=CON",
              b"\r\n#exec MESHMAP SETTEXTURE MESHMAP=Box NUM=1 TEXTURE=Nope\r\n", b"\xff\xfe", b"MESH=" * 3000]


def _uc_text(rng, b: bytearray, case: Case, _) -> None:
    """Text damage for scripts: long tokens, broken quotes, duplicated or joined lines."""
    if not case.victim.lower().endswith(".uc"):
        return _integer(rng, b, case, _)
    lines = bytes(b).split(b"\n")
    op = rng.choice(("token", "token", "dup", "join", "drop", "number"))
    i = rng.randrange(len(lines))
    if op == "token":
        s = lines[i]
        at = rng.randint(0, len(s))
        lines[i] = s[:at] + rng.choice(_UC_DAMAGE) + s[at:]
    elif op == "dup":
        lines[i:i] = [lines[i]] * rng.randint(1, 500)
    elif op == "join" and i + 1 < len(lines):
        lines[i:i + 2] = [lines[i].rstrip(b"\r") + b" " + lines[i + 1]]
    elif op == "drop":
        del lines[i]
    else:
        lines[i] = re.sub(rb"=(-?[0-9.]+)", lambda m: b"=" + rng.choice((b"0", b"-1", b"65536", b"1e30", b"inf",
                                                                              b"4294967296", b"0.0000001")), lines[i])
    b[:] = b"\n".join(lines)


def _splice(rng, b: bytearray, case: Case, others: list[bytes]) -> None:
    if not others:
        return
    other = rng.choice(others)
    cut = rng.randint(0, len(b))
    b[cut:] = other[rng.randint(0, len(other)):]


MUTATIONS = [_flip, _flip, _truncate, _insert, _delete, _integer, _integer, _integer, _float, _float, _splice]


_JSON_NUMBERS = [b"-1", b"0", b"1", b"3", b"4", b"5", b"255", b"65535", b"4294967295", b"2147483648", b"1e308",
                 b"0.5", b"99999999999", b"-0", b"1e-300", b"5126", b"5125", b"34962", b"[]", b"{}", b'"x"', b"null"]


def _json_parts(tree):
    """Every object and list in a JSON tree."""
    out, todo = [], [tree]
    while todo:
        x = todo.pop()
        if isinstance(x, (dict, list)):
            out.append(x)
            todo.extend(x.values() if isinstance(x, dict) else x)
    return out


def _json_tree(rng, b: bytearray) -> bool:
    """A .gltf's structure changed: a key dropped, or a list's item repeated (primitives, targets or
    accessors that name the same bytes over and over). False when the text is no JSON object."""
    try:
        tree = json.loads(bytes(b))
    except ValueError:
        return False
    if not isinstance(tree, dict):
        return False
    parts = _json_parts(tree)
    objects = [x for x in parts if isinstance(x, dict) and x]
    lists = [x for x in parts if isinstance(x, list) and x]
    if lists and (not objects or rng.random() < 0.5):
        items = rng.choice(lists)
        k = rng.randrange(len(items))
        items[k + 1:k + 1] = [items[k]] * rng.choice((1, 7, 40))
    else:
        d = rng.choice(objects)
        del d[rng.choice(list(d))]
    b[:] = json.dumps(tree).encode()
    return True


def _json_text(rng, b: bytearray, case: Case, _) -> None:
    """A .gltf's numbers (indices, counts, offsets, types) replaced by interesting ones, or its
    structure changed (_json_tree)."""
    if rng.random() < 0.25 and _json_tree(rng, b):
        return
    text = bytes(b)
    spans = [m.span() for m in re.finditer(rb"-?[0-9][0-9.eE+-]*", text)]
    if not spans:
        return _integer(rng, b, case, _)
    lo, hi = rng.choice(spans)
    b[lo:hi] = rng.choice(_JSON_NUMBERS)


def mutate(rng: random.Random, case: Case, others: list[bytes]) -> Case:
    b = bytearray(case.files[case.victim])
    pool = MUTATIONS + ([_surgery_3ds] * 4 if case.fmt == "3ds" else []) + \
        ([_uc_text] * 8 if case.victim.lower().endswith(".uc") else []) + \
        ([_json_text] * 12 if case.victim.lower().endswith(".gltf") else [])
    for _ in range(rng.choice((1, 1, 2, 3, 4))):
        rng.choice(pool)(rng, b, case, others)
    out = case.with_victim(bytes(b))
    partners = [n for n in case.files if n != case.victim and not n.lower().endswith(".uc")]
    if partners and rng.random() < 0.25:
        # files that lie together (a vertex count in one, a frame size in the other)
        name = rng.choice(partners)
        other = bytearray(out.files[name])
        _integer(rng, other, case, others)
        out.files[name] = bytes(other)
    return out


# ---------------------------------------------------------------------------
# One input, as the importers see it
# ---------------------------------------------------------------------------
class Hang(BaseException):
    """Raised by the alarm; not an Exception, so that no `except Exception` in the code under test hides it."""


class BadScene(Exception):
    """The Scene a reader made does not hold together (the bridge would have to refuse it)."""


def run_case(case: Case, folder: Path) -> int:
    """Read, describe, rewrite, re-save and convert one input; only CodecError may escape. Returns
    how many conversions wrote their files."""

    from addon import codec
    from addon.codec import meshops
    from addon.codec.errors import CodecError
    path = case.write(folder)
    opts = {k: str(folder / v) if k == "rest_mesh" else v for k, v in case.options.items()}
    try:
        scene = codec.load(path, **opts)
    except CodecError:
        return 0
    for m in scene.meshes:
        wrong = meshops.mismatched_layers(m)
        if wrong:
            raise BadScene(f"mesh {m.name!r}: {', '.join(wrong)} do not match the mesh")
        meshops.make_safe(m)
    codec.info(path, **opts)
    codec.check(path, **opts)
    out = folder / "out"
    out.mkdir(exist_ok=True)
    try:
        codec.save(scene, out / ("rewrite" + Path(case.entry).suffix.lower().replace(".uc", "_d.3d")))
    except CodecError:
        pass
    return convert(path, opts)


def targets(scene) -> list:
    """The formats other than the scene's own that hold something it has."""
    from addon.codec import features, registry
    has = set(features.count(scene))
    return [s for name, s in registry.registered_formats().items()
            if name != scene.source_format and has & features.HOLDS.get(name, has)]


def convert(path: Path, opts: dict) -> int:
    """`lgf convert`'s path: the input read afresh (its companions too; a UNIGINE .anim with its rest
    mesh, as a set) and encoded, in memory, to every target that holds some of it, each within
    TIME_LIMIT of its own; returns how many encoded without a CodecError."""
    from addon import codec
    from addon.codec.errors import CodecError
    if path.suffix.lower() == ".anim" and "rest_mesh" in opts:
        # a lone .anim converts to nothing else: as a set, X.anim beside X.mesh, it goes with its mesh
        shutil.copyfile(opts["rest_mesh"], path.with_suffix(".mesh"))
        path, opts = path.with_suffix(".mesh"), {k: v for k, v in opts.items() if k != "rest_mesh"}
    _rearm()
    try:
        scene = codec.load(path, with_companions=True, **opts)
    except CodecError:                       # a companion the first read did not take in
        return 0
    done = 0
    for spec in targets(scene):
        _rearm()
        try:
            codec.encode(scene, spec.main_output(path.parent / "out", "convert"), spec.name)
            done += 1
        except CodecError:
            pass
    return done


def _rearm() -> None:
    """Restart guarded's alarm (when one is set): each stage is held to TIME_LIMIT, not their sum."""
    import signal
    if signal.getitimer(signal.ITIMER_REAL)[0] > 0:
        signal.setitimer(signal.ITIMER_REAL, TIME_LIMIT)


def _vm_bytes() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


def _where(tb) -> str:
    """The innermost frame in the add-on: the failure's place, for de-duplication."""
    frames = traceback.extract_tb(tb)
    mine = [f for f in frames if "/addon/" in f.filename.replace("\\", "/")] or frames
    f = mine[-1] if mine else None
    return f"{Path(f.filename).name}:{f.lineno} {f.name}" if f else "?"


def _warm_up() -> None:
    """Import the codec and start numpy's BLAS threads before the memory cap: under the cap,
    OpenBLAS cannot allocate its buffers and spins instead of failing."""
    import numpy as np
    import addon.codec.registry
    addon.codec.registry.registered_formats()
    np.linalg.svd(np.eye(3))
    np.linalg.inv(np.eye(4)[None].repeat(64, 0))


def guarded(case: Case, folder: Path) -> tuple[str, str] | None:
    """run_case under the alarm and the memory cap: None (and CONVERTED set), or (signature, details)."""
    global CONVERTED
    import resource
    import signal

    def on_alarm(signum, frame):
        raise Hang()

    _warm_up()
    old = signal.signal(signal.SIGALRM, on_alarm)
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    size = sum(len(b) for b in case.files.values())
    cap = _vm_bytes() + MEMORY_FLOOR + MEMORY_PER_BYTE * size
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    try:
        resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
        signal.setitimer(signal.ITIMER_REAL, TIME_LIMIT)
        CONVERTED = run_case(case, folder)
        return None
    except Hang as e:
        return f"hang over {TIME_LIMIT:g} s at {_where(e.__traceback__)}", traceback.format_exc()
    except MemoryError as e:
        return f"allocation over the cap at {_where(e.__traceback__)}", traceback.format_exc()
    except BaseException as e:     # noqa: BLE001  (anything else is the defect we look for)
        return f"{type(e).__name__} at {_where(e.__traceback__)}", traceback.format_exc()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
        signal.signal(signal.SIGALRM, old)
        for p in list(folder.iterdir()):
            shutil.rmtree(p) if p.is_dir() else p.unlink()


def _worker(conn) -> None:
    import warnings
    warnings.simplefilter("ignore")          # numpy's RuntimeWarnings on damaged floats are expected
    folder = Path(tempfile.mkdtemp(prefix="lgf-fuzz-"))
    try:
        while True:
            case = conn.recv()
            if case is None:
                return
            got = guarded(case, folder)
            conn.send((got, CONVERTED if got is None else 0))
    finally:
        shutil.rmtree(folder, ignore_errors=True)


class Runner:
    """A worker process fed one case at a time; restarted when it dies or hangs for good."""

    def __init__(self) -> None:
        self.ctx = mp.get_context("fork")
        self.proc = None
        self.conn = None
        self.conversions = 0            # conversions that wrote their files, over every input run

    def _start(self) -> None:
        self.conn, child = self.ctx.Pipe()
        self.proc = self.ctx.Process(target=_worker, args=(child,), daemon=True)
        self.proc.start()

    def run(self, case: Case) -> tuple[str, str] | None:
        if self.proc is None or not self.proc.is_alive():
            self._start()
        self.conn.send(case)
        if self.conn.poll(HARD_LIMIT):
            try:
                got, converted = self.conn.recv()
                self.conversions += converted
                return got
            except EOFError:
                pass
        else:
            self.proc.kill()
            self.proc.join()
            self.proc = None
            return f"hang over {HARD_LIMIT:g} s (the alarm could not stop it)", ""
        code = self.proc.exitcode
        self.proc.join()
        self.proc = None
        return f"worker died (exit {code})", ""

    def close(self) -> None:
        if self.proc is not None and self.proc.is_alive():
            self.conn.send(None)
            self.proc.join(2)
            if self.proc.is_alive():
                self.proc.kill()


# ---------------------------------------------------------------------------
# Minimizing and saving
# ---------------------------------------------------------------------------
def minimize(runner: Runner, case: Case, signature: str, budget: float = 20.0) -> Case:
    """Cut ranges out of the damaged file while the same failure remains (a short ddmin)."""
    data = case.files[case.victim]
    stop = time.monotonic() + budget
    step = max(1, len(data) // 2)
    while step >= 1 and time.monotonic() < stop:
        i, cut = 0, False
        while i < len(data) and time.monotonic() < stop:
            trial = data[:i] + data[i + step:]
            got = runner.run(case.with_victim(trial))
            if got is not None and got[0] == signature:
                data, cut = trial, True
            else:
                i += step
        if not cut:
            step //= 2
    return case.with_victim(data)


def save_case(case: Case, signature: str, details: str, where: Path = CASES) -> Path:
    key = hashlib.sha1(f"{case.fmt}|{signature}".encode() + case.files[case.victim]).hexdigest()[:10]
    folder = where / f"{case.fmt}-{key}"
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    for name, data in case.files.items():
        (folder / name).write_bytes(data)
    meta = {"format": case.fmt, "entry": case.entry, "victim": case.victim, "options": case.options,
            "signature": signature, "details": details.strip().splitlines()[-3:]}
    (folder / "case.json").write_text(json.dumps(meta, indent=1) + "\n")
    return folder


def load_case(folder: Path) -> Case:
    meta = json.loads((folder / "case.json").read_text())
    files = {p.name: p.read_bytes() for p in folder.iterdir() if p.name != "case.json"}
    return Case(meta["format"], files, meta["entry"], meta["victim"], meta.get("options", {}))


# ---------------------------------------------------------------------------
def fuzz(minutes: float, formats: list[str], seed: int, save_to: Path | None) -> dict:
    all_seeds = seeds()
    unknown = [f for f in formats if f not in all_seeds]
    if unknown:
        raise SystemExit(f"unknown format(s) {unknown}; known: {', '.join(all_seeds)}")
    runner = Runner()
    report = {}
    try:
        for fmt in formats:
            rng = random.Random(f"{seed}:{fmt}")
            cases = all_seeds[fmt]
            others = [c.files[c.victim] for c in cases]
            found: dict[str, str] = {}
            count, start, converted = 0, time.monotonic(), runner.conversions
            stop = start + 60.0 * minutes / len(formats)
            while time.monotonic() < stop:
                case = mutate(rng, rng.choice(cases), others)
                got = runner.run(case)
                count += 1
                if got is None or got[0] in found:
                    continue
                signature, details = got
                small = minimize(runner, case, signature)
                found[signature] = str(save_case(small, signature, details, save_to)) if save_to else ""
                print(f"  {fmt}: FAILURE {signature}" + (f" -> {found[signature]}" if save_to else ""), flush=True)
            spent, converted = time.monotonic() - start, runner.conversions - converted
            report[fmt] = {"inputs": count, "seconds": round(spent, 1), "inputs_per_second": round(count / spent, 1),
                           "conversions": converted, "failures": sorted(found)}
            print(f"{fmt:14s} {count:7d} inputs  {count / spent:7.1f}/s  {converted:7d} conversions  "
                  f"{len(found)} failure(s)", flush=True)
    finally:
        runner.close()
    return report


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 build.py fuzz", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--minutes", type=float, default=1.0, help="total time, shared by the formats")
    ap.add_argument("--format", action="append", help="fuzz only this format (repeatable): "
                    "3ds, unreal, unigine-mesh, unigine-anim, u3d")
    ap.add_argument("--seed", type=int, default=None, help="random seed (CI uses a fixed one)")
    ap.add_argument("--save", default=str(CASES), help="where failures go ('' to keep none)")
    ap.add_argument("--json", action="store_true", help="print the report as JSON too")
    args = ap.parse_args(argv)
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    formats = args.format or ["3ds", "unreal", "unigine-mesh", "unigine-anim", "u3d", "gltf", "glb"]
    print(f"fuzzing {', '.join(formats)} for {args.minutes:g} min, seed {seed}", flush=True)
    report = fuzz(args.minutes, formats, seed, Path(args.save) if args.save else None)
    if args.json:
        print(json.dumps(report, indent=1))
    return 1 if any(r["failures"] for r in report.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
