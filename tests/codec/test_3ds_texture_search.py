"""Finding a .3ds file's textures: any case, below the model's folder and the user's folders, 8.3 names."""
from addon.codec.formats.studio3ds.materials import TextureFinder


def test_textures_are_found_below_the_model_in_any_case(tmp_path):
    (tmp_path / "maps" / "Metal").mkdir(parents=True)
    (tmp_path / "maps" / "Metal" / "Rusty_Plate.JPG").write_bytes(b"x")
    model = tmp_path / "ship.3ds"
    f = TextureFinder(str(model))
    assert f.find("RUSTY_PL.JPG") == str(tmp_path / "maps" / "Metal" / "Rusty_Plate.JPG")     # 8.3, cut stem
    assert f.find("rusty_plate.jpg") == str(tmp_path / "maps" / "Metal" / "Rusty_Plate.JPG")
    assert f.find("C:\\\\3DS\\\\MAPS\\\\RUSTY_~1.JPG") == str(tmp_path / "maps" / "Metal" / "Rusty_Plate.JPG")
    assert f.find("missing.jpg") == ""


def test_the_file_folder_wins_then_each_user_folder_in_turn(tmp_path):
    for d in ("model/sub", "lib1/a", "lib2"):
        (tmp_path / d).mkdir(parents=True)
    (tmp_path / "model" / "wood.bmp").write_bytes(b"x")
    (tmp_path / "model" / "sub" / "wood.bmp").write_bytes(b"x")
    (tmp_path / "lib1" / "a" / "stone.bmp").write_bytes(b"x")
    (tmp_path / "lib2" / "stone.bmp").write_bytes(b"x")
    (tmp_path / "lib2" / "sky.bmp").write_bytes(b"x")
    f = TextureFinder(str(tmp_path / "model" / "m.3ds"), f"{tmp_path / 'lib1'};{tmp_path / 'lib2'}")
    assert f.find("WOOD.BMP") == str(tmp_path / "model" / "wood.bmp")
    assert f.find("stone.bmp") == str(tmp_path / "lib1" / "a" / "stone.bmp")
    assert f.find("sky.bmp") == str(tmp_path / "lib2" / "sky.bmp")


def test_the_tree_below_is_walked_only_for_names_not_beside_the_file(tmp_path, monkeypatch):
    import os
    (tmp_path / "deep").mkdir()
    (tmp_path / "wood.bmp").write_bytes(b"x")
    (tmp_path / "deep" / "stone.bmp").write_bytes(b"x")
    walks = []
    real_walk = os.walk
    monkeypatch.setattr(os, "walk", lambda *a, **k: walks.append(a[0]) or real_walk(*a, **k))
    f = TextureFinder(str(tmp_path / "m.3ds"))
    assert f.find("WOOD.BMP") == str(tmp_path / "wood.bmp") and walks == []
    assert f.find("stone.bmp") == str(tmp_path / "deep" / "stone.bmp") and len(walks) == 1
    assert f.find("stone.bmp") and len(walks) == 1                        # listed once
