"""Unreal pairs whose files only the .uc script names (ANIVFILE=/DATAFILE=, prototype
DATAnn.3D/ANIVnn.3D) read from any of their files, and check rewrites them."""
import pytest

from addon.codec import check, load, read_model
from addon.codec.errors import FormatError
from tests.codec.unreal_fixtures import TETRA, tetra_pair

SCRIPT = ("class Thing extends Actor;\r\n"
          "#exec MESH IMPORT MESH=Thing ANIVFILE=MODELS\\ANIV01.3D DATAFILE=MODELS\\DATA01.3D X=0 Y=0 Z=0\r\n"
          "#exec MESH SEQUENCE MESH=Thing SEQ=All STARTFRAME=0 NUMFRAMES=3\r\n")


def _package(tmp_path, script=SCRIPT, data="DATA01.3D", aniv="ANIV01.3D"):
    d, a = tetra_pair()
    (tmp_path / "Models").mkdir()
    (tmp_path / "Classes").mkdir()
    (tmp_path / "Models" / data).write_bytes(d)
    (tmp_path / "Models" / aniv).write_bytes(a)
    (tmp_path / "Classes" / "Thing.uc").write_bytes(script.encode("latin-1"))
    return tmp_path


@pytest.mark.parametrize("opened", ["Classes/Thing.uc", "Models/DATA01.3D", "Models/ANIV01.3D"])
def test_prototype_names_import_from_any_of_their_files(tmp_path, opened):
    pkg = _package(tmp_path)
    scene = load(pkg / opened)
    (mesh,) = scene.meshes
    assert mesh.name == "Thing"
    assert len(mesh.positions) == len(TETRA) and len(mesh.shape_keys) == 3
    assert read_model(pkg / opened)[1].script_path.endswith("Thing.uc")
    assert [a.name for a in scene.animations] == ["All"]


@pytest.mark.parametrize("opened", ["Models/DATA01.3D", "Classes/Thing.uc"])
def test_check_rewrites_the_pair_the_script_names(tmp_path, opened):
    pkg = _package(tmp_path)
    results = check(pkg / opened)
    assert sorted(r.file.rsplit("/", 1)[-1] for r in results) == ["ANIV01.3D", "DATA01.3D"]
    assert all(r.ok and r.message.endswith("bytes identical") for r in results)


def test_an_animation_file_only_the_script_names(tmp_path):
    script = SCRIPT.replace("MODELS\\ANIV01.3D", "MODELS\\thing_frames.3d").replace("MODELS\\DATA01.3D",
                                                                                   "MODELS\\thing_d.3d")
    pkg = _package(tmp_path, script, "thing_d.3d", "thing_frames.3d")
    for opened in ("Models/thing_d.3d", "Models/thing_frames.3d"):
        assert len(load(pkg / opened).meshes[0].shape_keys) == 3


def test_a_prototype_file_no_script_names_says_what_is_missing(tmp_path):
    pkg = _package(tmp_path, "class Thing extends Actor;\r\n")
    with pytest.raises(FormatError, match="must be named <name>_d.3d or <name>_a.3d"):
        load(pkg / "Models" / "DATA01.3D")


def test_a_script_naming_a_missing_partner_says_which(tmp_path):
    pkg = _package(tmp_path)
    (pkg / "Models" / "ANIV01.3D").unlink()
    with pytest.raises(FormatError, match="ANIV01.3D"):
        load(pkg / "Models" / "DATA01.3D")


def test_check_of_a_truncated_animation_file_is_not_a_plain_ok(tmp_path):
    d, a = tetra_pair(frames=3)
    (tmp_path / "t_d.3d").write_bytes(d)
    (tmp_path / "t_a.3d").write_bytes(a[:-7])                 # the last frame cut short
    results = check(tmp_path / "t_d.3d")
    assert all(r.ok for r in results)                        # the bytes still rewrite exactly ...
    anim = next(r for r in results if r.file.endswith("t_a.3d"))
    assert "warning: header claims 3 frames" in anim.message  # ... and the lie is said
