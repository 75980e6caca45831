"""Unreal scripts as real game sources lay them out: a script that imports several meshes, and data
files whose partner only the package's scripts name (prototype DATAnn.3D, female_d.3d animated by
Female1_a.3d in one script and F1Dead_a.3d in another)."""
import json
import os

import numpy as np
import pytest

from addon.codec import check, load, save
from addon.codec.cli import main
from addon.codec.errors import FormatError
from addon.codec.formats.unreal import read_scripts
from tests.codec.unreal_fixtures import QUADSHOT_UC, TETRA, a_file, quadshot_package, tetra_pair

MESHES = ["QuadShotPickup", "QuadShotHeld"]


def _keys_of(scene, mesh):
    return len(next(m for m in scene.meshes if m.name == mesh).shape_keys)


def test_a_script_imports_every_mesh_whose_files_exist(tmp_path):
    scene = load(quadshot_package(tmp_path) / "Classes" / "QuadShot.uc")
    assert [m.name for m in scene.meshes] == MESHES
    assert [_keys_of(scene, m) for m in MESHES] == [3, 5]
    assert any("QuadShot3rd" in w and "skipped" in w for w in scene.warnings)
    # each its own object, placed by its own ORIGIN and SCALE: YAW=64 turns the pickup a quarter
    # (Unreal X becomes Blender -Y); the held mesh's 0.2/0.4 over the default 1/8, 1/4 is x1.6
    pickup, held = (next(n for n in scene.nodes if n.name == m) for m in MESHES)
    np.testing.assert_allclose(pickup.matrix[:3, 0], [0, -1, 0], atol=1e-9)
    np.testing.assert_allclose(held.matrix[:3, :3], np.eye(3) * 1.6, atol=1e-6)
    # each its own actions, keying only its own object
    owner = {a.name: {c.target for c in a.channels} for a in scene.animations}
    node = {n.name: i for i, n in enumerate(scene.nodes)}
    assert owner == {"QuadShotPickup:All": {node["QuadShotPickup"]}, "QuadShotPickup:Spin": {node["QuadShotPickup"]},
                     "QuadShotHeld:All": {node["QuadShotHeld"]}, "QuadShotHeld:Fire": {node["QuadShotHeld"]}}
    # each its own skin material
    assert len({i for m in scene.meshes for i in m.materials}) == 2


def test_mesh_name_picks_one_mesh_of_the_script(tmp_path):
    scene = load(quadshot_package(tmp_path) / "Classes" / "QuadShot.uc", mesh_name="quadshotheld")
    assert [m.name for m in scene.meshes] == ["QuadShotHeld"]
    assert [a.name for a in scene.animations] == ["All", "Fire"]
    with pytest.raises(FormatError, match="QuadShot3rd"):      # named, a mesh whose files are missing is an error
        load(tmp_path / "Classes" / "QuadShot.uc", mesh_name="QuadShot3rd")
    with pytest.raises(FormatError, match="no #exec MESH IMPORT for mesh 'Nothing'"):
        load(tmp_path / "Classes" / "QuadShot.uc", mesh_name="Nothing")


def test_check_of_the_script_rewrites_every_pair(tmp_path):
    results = check(quadshot_package(tmp_path) / "Classes" / "QuadShot.uc")
    assert sorted(os.path.basename(r.file) for r in results) == ["ANIV20.3D", "ANIV25.3D", "data20.3D", "data25.3D"]
    assert all(r.ok and "bytes identical" in r.message for r in results)


def test_info_and_convert_of_the_script_see_every_mesh(tmp_path, capsys):
    uc = quadshot_package(tmp_path) / "Classes" / "QuadShot.uc"
    assert main(["info", str(uc), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert [(m["name"], m["shape_keys"]) for m in shown["meshes"]] == [("QuadShotPickup", 3), ("QuadShotHeld", 5)]
    out = tmp_path / "out"
    assert main(["convert", str(uc), str(out / "weapon_d.3d")]) == 0
    # one output per mesh, named after it; each holds that mesh alone
    assert sorted(os.listdir(out)) == sorted(f"{m}{end}" for m in MESHES for end in ("_d.3d", "_a.3d", ".uc"))
    for mesh, frames in zip(MESHES, (3, 5)):
        back = load(out / f"{mesh}_d.3d")
        assert len(back.meshes) == 1 and len(back.meshes[0].shape_keys) == frames


def test_export_of_separate_meshes_writes_one_mesh_import_per_object(tmp_path):
    scene = load(quadshot_package(tmp_path / "in") / "Classes" / "QuadShot.uc")
    target = tmp_path / "out" / "Classes" / "Weapon.uc"
    save(scene, target, separate_meshes=True)
    text = target.read_text("latin-1")
    assert [line.split()[3] for line in text.splitlines() if line.startswith("#exec MESH IMPORT")] == \
        [f"MESH={m}" for m in MESHES]
    assert sorted(os.listdir(tmp_path / "out" / "Models")) == sorted(f"{m}_{r}.3d" for m in MESHES for r in "ad")
    back = load(target)
    assert [m.name for m in back.meshes] == MESHES and [_keys_of(back, m) for m in MESHES] == [3, 5]
    # each mesh keeps its own sequences (the pickup has no Fire)
    assert sorted(a.name for a in back.animations) == ["QuadShotHeld:All", "QuadShotHeld:Fire", "QuadShotPickup:All",
                                                                "QuadShotPickup:Spin"]
    np.testing.assert_allclose(next(n for n in back.nodes if n.name == "QuadShotHeld").matrix[:3, :3],
                               np.eye(3) * 1.6, atol=1e-6)
    # one object still writes one script entry, under the target's name
    one = load(tmp_path / "in" / "Classes" / "QuadShot.uc", mesh_name="QuadShotHeld")
    save(one, tmp_path / "one" / "Held.uc", separate_meshes=True)
    assert sorted(os.listdir(tmp_path / "one")) == ["Held.uc", "Held_a.3d", "Held_d.3d"]
    assert (tmp_path / "one" / "Held.uc").read_text("latin-1").count("#exec MESH IMPORT") == 1
    # the default stays: every object merged into one mesh, one MESH IMPORT
    save(scene, tmp_path / "merged" / "Weapon.uc")
    merged = (tmp_path / "merged" / "Weapon.uc").read_text("latin-1")
    assert merged.count("#exec MESH IMPORT") == 1
    assert len(load(tmp_path / "merged" / "Weapon.uc").meshes[0].positions) == 2 * len(TETRA)


@pytest.mark.parametrize("opened,mesh,frames", [("data20.3D", "QuadShotHeld", 5), ("ANIV25.3D", "QuadShotPickup", 3)])
def test_a_prototype_file_picked_directly_is_paired_by_the_package_script(tmp_path, opened, mesh, frames):
    pkg = quadshot_package(tmp_path)
    scene = load(pkg / "Models" / opened)
    assert [m.name for m in scene.meshes] == [mesh] and _keys_of(scene, mesh) == frames
    results = check(pkg / "Models" / opened)
    assert len(results) == 2 and all(r.ok and "bytes identical" in r.message for r in results)


def test_a_package_tree_converts_each_data_file_once(tmp_path):
    pkg = quadshot_package(tmp_path / "Pkg")
    out = tmp_path / "out"
    assert main(["convert", str(pkg), "--to", "unreal", "-d", str(out)]) == 0
    # the ANIVnn.3D files go with the data files the script pairs them with
    assert sorted(p.name for p in (out / "Models").iterdir() if p.name.endswith("_d.3d")) == \
        ["data20_d.3d", "data25_d.3d"]
    assert len(load(out / "Models" / "data20_d.3d").meshes[0].shape_keys) == 5


def _female_package(root):
    """female_d.3d, animated by Female1_a.3d (Female1.uc) and by F1Dead_a.3d (FemaleCarcass.uc)."""
    (root / "Models").mkdir(parents=True)
    (root / "Classes").mkdir()
    d, a = tetra_pair(4)
    (root / "Models" / "female_d.3d").write_bytes(d)
    (root / "Models" / "Female1_a.3d").write_bytes(a)
    (root / "Models" / "F1Dead_a.3d").write_bytes(tetra_pair(2)[1])
    for cls, mesh, aniv in (("FemaleCarcass", "F1Dead", "F1Dead_a.3d"), ("Female1", "Female1", "Female1_a.3d")):
        (root / "Classes" / f"{cls}.uc").write_text(
            f"class {cls} extends Pawn;\r\n#exec MESH IMPORT MESH={mesh} ANIVFILE=MODELS\\{aniv} "
            f"DATAFILE=MODELS\\Female_d.3d X=0 Y=0 Z=0\r\n", "latin-1")
    return root


def test_a_data_file_two_scripts_animate_imports_the_first_and_names_the_other(tmp_path):
    pkg = _female_package(tmp_path)
    scene = load(pkg / "Models" / "female_d.3d")
    assert scene.meshes[0].name == "Female1" and len(scene.meshes[0].shape_keys) == 4
    assert any("F1Dead" in w and "Female1" in w for w in scene.warnings)
    other = load(pkg / "Models" / "female_d.3d", mesh_name="F1Dead")
    assert other.meshes[0].name == "F1Dead" and len(other.meshes[0].shape_keys) == 2
    with pytest.raises(FormatError, match="F1Dead"):           # an unknown name lists those there are
        load(pkg / "Models" / "female_d.3d", mesh_name="Male1")
    for opened, options in (("female_d.3d", {}), ("F1Dead_a.3d", {}), ("female_d.3d", {"mesh_name": "F1Dead"})):
        results = check(pkg / "Models" / opened, **options)
        assert sorted(os.path.basename(r.file) for r in results) == \
            sorted(["female_d.3d", "F1Dead_a.3d" if opened == "F1Dead_a.3d" or options else "Female1_a.3d"])
        assert all(r.ok and "bytes identical" in r.message for r in results), results
    assert load(pkg / "Models" / "F1Dead_a.3d").meshes[0].name == "F1Dead"
    # converted, the data file gives one output per animation it has
    assert main(["convert", str(pkg), "--to", "unreal", "-d", str(tmp_path / "out")]) == 0
    assert sorted(p.name for p in (tmp_path / "out" / "Models").iterdir()) == \
        ["F1Dead.uc", "F1Dead_a.3d", "F1Dead_d.3d", "Female1.uc", "Female1_a.3d", "Female1_d.3d"]
    assert len(load(tmp_path / "out" / "Models" / "F1Dead_d.3d").meshes[0].shape_keys) == 2


def test_the_package_scripts_are_read_once_per_folder(tmp_path, monkeypatch):
    pkg = quadshot_package(tmp_path)
    for i in range(300):            # a package has hundreds of scripts, most without a mesh
        (pkg / "Classes" / f"A{i:03d}.uc").write_text(f"class A{i:03d} extends Actor;\r\n", "latin-1")
    reads = []
    real = read_scripts.read_text
    monkeypatch.setattr(read_scripts, "read_text", lambda p: reads.append(p.name) or real(p))
    read_scripts._imports.cache_clear()
    for opened in ("data20.3D", "ANIV20.3D", "data25.3D", "ANIV25.3D"):
        assert len(load(pkg / "Models" / opened).meshes) == 1
    assert len(reads) == 301 and len(set(reads)) == 301          # every script once, for four files
    # a script that changes is read again
    (pkg / "Classes" / "QuadShot.uc").write_bytes(QUADSHOT_UC.replace("QuadShotHeld", "Held").encode("latin-1"))
    reads.clear()
    assert load(pkg / "Models" / "data20.3D").meshes[0].name == "Held"
    assert "QuadShot.uc" in reads


def test_convert_lists_a_scripts_meshes_and_files_without_reading_the_meshes(tmp_path, monkeypatch):
    """`lgf convert` asks for the parts and the source files before the up-to-date check: found from
    the script alone, not by decoding every pair (which the conversion then does once)."""
    from addon.codec.formats.unreal import read as unreal_read
    pkg = quadshot_package(tmp_path)
    decoded = []
    real = unreal_read._read_pair
    monkeypatch.setattr(unreal_read, "_read_pair", lambda d, a, w: decoded.append(d.name) or real(d, a, w))
    script = pkg / "Classes" / "QuadShot.uc"
    assert unreal_read.parts(script) == MESHES
    assert sorted(p.name for p in unreal_read.sources(script)) == ["ANIV20.3D", "ANIV25.3D", "data20.3D", "data25.3D"]
    assert decoded == []
    assert len(load(script).meshes) == 2 and sorted(decoded) == ["data20.3D", "data25.3D"]


def test_a_broken_file_of_one_mesh_fails_the_script_read_naming_it(tmp_path):
    pkg = quadshot_package(tmp_path)
    (pkg / "Models" / "ANIV20.3D").write_bytes(a_file([[(0, 0, 0)] * 4])[:3])
    with pytest.raises(FormatError, match="ANIV20.3D"):
        load(pkg / "Classes" / "QuadShot.uc")


def test_a_script_of_very_many_meshes_reads_a_bounded_number(tmp_path):
    d, a = tetra_pair(1)
    (tmp_path / "t_d.3d").write_bytes(d)
    (tmp_path / "t_a.3d").write_bytes(a)
    lines = [f"#exec MESH IMPORT MESH=M{i} ANIVFILE=t_a.3d DATAFILE=t_d.3d" for i in range(300)]
    (tmp_path / "many.uc").write_text("\r\n".join(lines), "latin-1")
    scene = load(tmp_path / "many.uc")
    assert len(scene.meshes) == 256
    assert any("imports 300 meshes; reading the first 256" in w for w in scene.warnings)


def test_separate_meshes_give_each_object_the_animations_that_move_it(tmp_path):
    """Animations not named after an object (made in Blender) go to the objects they key."""
    scene = load(quadshot_package(tmp_path / "in") / "Classes" / "QuadShot.uc")
    for a in scene.animations:
        a.name = a.name.split(":", 1)[1]            # All, Spin (the pickup's); All, Fire (the held mesh's)
    target = tmp_path / "out" / "Weapon.uc"
    save(scene, target, separate_meshes=True)
    seqs = sorted(tuple(line.split()[3:6]) for line in target.read_text("latin-1").splitlines()
                  if line.startswith("#exec MESH SEQUENCE"))
    assert [(m, q) for m, q, _ in seqs] == [("MESH=QuadShotHeld", "SEQ=All"), ("MESH=QuadShotHeld", "SEQ=Fire"),
                                           ("MESH=QuadShotPickup", "SEQ=All"), ("MESH=QuadShotPickup", "SEQ=Spin")]


def test_a_script_beside_the_files_pairs_them(tmp_path):
    d, a = tetra_pair(3)
    (tmp_path / "DATA01.3D").write_bytes(d)
    (tmp_path / "aniv01.3d").write_bytes(a)
    (tmp_path / "Thing.uc").write_text("#exec MESH IMPORT MESH=Thing ANIVFILE=Models\\ANIV01.3D "
                                       "DATAFILE=Models\\data01.3d\r\n", "latin-1")
    for opened in ("DATA01.3D", "aniv01.3d"):
        scene = load(tmp_path / opened)
        assert scene.meshes[0].name == "Thing" and len(scene.meshes[0].shape_keys) == 3


def test_a_warning_of_one_mesh_of_several_names_the_mesh(tmp_path):
    pkg = quadshot_package(tmp_path)
    aniv = pkg / "Models" / "ANIV25.3D"
    aniv.write_bytes(aniv.read_bytes() + b"junk")           # bytes after the pickup's last frame
    scene = load(pkg / "Classes" / "QuadShot.uc")
    assert any(w.startswith("mesh 'QuadShotPickup': 4 bytes after frame 3 ignored") for w in scene.warnings), \
        scene.warnings
