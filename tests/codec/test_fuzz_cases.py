"""Every input the fuzzer ever failed on (tests/fuzz_cases/) now reads, or fails with a CodecError,
within the fuzzer's time and memory limits."""
from pathlib import Path

import pytest

from tests import fuzz

CASES = sorted(p for p in fuzz.CASES.glob("*") if (p / "case.json").is_file())


@pytest.mark.parametrize("folder", CASES, ids=[p.name for p in CASES])
def test_saved_fuzz_case_is_handled(tmp_path, folder):
    assert fuzz.guarded(fuzz.load_case(folder), tmp_path) is None


def test_the_guard_reports_what_is_not_a_codec_error(tmp_path, monkeypatch):
    # the replay above passes only because guarded() catches; check that it does report
    def explode(case, folder):
        raise ZeroDivisionError()
    monkeypatch.setattr(fuzz, "run_case", explode)
    case = fuzz.Case("3ds", {"a.3ds": b"MM"}, "a.3ds", "a.3ds")
    signature, _ = fuzz.guarded(case, tmp_path)
    assert signature.startswith("ZeroDivisionError")


def test_the_guard_stops_a_hang(tmp_path, monkeypatch):
    def spin(case, folder):
        while True:
            pass
    monkeypatch.setattr(fuzz, "run_case", spin)
    monkeypatch.setattr(fuzz, "TIME_LIMIT", 0.2)
    signature, _ = fuzz.guarded(fuzz.Case("3ds", {"a.3ds": b"MM"}, "a.3ds", "a.3ds"), tmp_path)
    assert signature.startswith("hang")


def test_the_guard_caps_memory(tmp_path, monkeypatch):
    def hog(case, folder):
        return bytearray(fuzz.MEMORY_FLOOR * 4)
    monkeypatch.setattr(fuzz, "run_case", hog)
    signature, _ = fuzz.guarded(fuzz.Case("3ds", {"a.3ds": b"MM"}, "a.3ds", "a.3ds"), tmp_path)
    assert signature.startswith("allocation over the cap")


def test_the_fuzzer_converts_each_input_to_the_other_formats(tmp_path, monkeypatch):
    """A conversion that fails with anything but a CodecError is a failure like a read's."""
    from addon import codec
    real, tried = codec.encode, []

    def encode(scene, path, fmt="", **options):
        if fmt and fmt != scene.source_format:      # the convert stage names its target; save does not
            tried.append(fmt)
            raise ValueError("cannot convert float NaN to integer")
        return real(scene, path, fmt, **options)
    monkeypatch.setattr(codec, "encode", encode)
    path = fuzz.ASSETS / "ultimate3d" / "skinned_v2.u3d"
    seed = fuzz.Case("u3d", {path.name: path.read_bytes()}, path.name, path.name)
    signature, _ = fuzz.guarded(seed, tmp_path)
    assert signature.startswith("ValueError")
    assert len(tried) == 1                        # the first other format: the failure stops the input
    scene = codec.load(path)
    names = [s.name for s in fuzz.targets(scene)]
    assert {"3ds", "unigine-anim", "unigine-mesh", "unreal"} <= set(names) and "u3d" not in names
