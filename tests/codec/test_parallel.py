"""parallel.map_two: the same results, in order, as a loop; the loop's first exception."""
import threading
import time

import numpy as np
import pytest

from addon.codec import parallel


@pytest.mark.parametrize("n", [0, 1, 2, 7])
def test_map_two_gives_what_a_loop_gives_in_order(n):
    items = list(range(n))
    assert parallel.map_two(lambda x: x * x, items) == [x * x for x in items]


def test_map_two_uses_a_second_thread():
    seen, other = {}, threading.Event()

    def fn(x):
        seen[x] = threading.get_ident()
        if x == 0:
            assert other.wait(5)                # item 0 waits until the other thread has done one
        else:
            other.set()
        return x
    assert parallel.map_two(fn, list(range(6))) == list(range(6))
    assert len(set(seen.values())) == 2



@pytest.mark.parametrize("handling", ["ignore", "raise"])
def test_the_worker_handles_numpy_errors_as_the_caller_does(handling):
    seen, other = {}, threading.Event()

    def fn(x):
        if x == 0:
            assert other.wait(5)                # the other thread takes an item too
        else:
            other.set()
        seen[x] = (threading.get_ident(), np.geterr()["divide"], np.geterr()["invalid"])
        return x
    with np.errstate(divide=handling, invalid=handling):
        parallel.map_two(fn, list(range(6)))
    assert len({t for t, _, _ in seen.values()}) == 2
    assert {(d, i) for _, d, i in seen.values()} == {(handling, handling)}

@pytest.mark.parametrize("bad", [[1, 4], [4, 1], [3], [0, 5]])
def test_map_two_raises_the_first_error_in_item_order(bad):
    def fn(x):
        if x in bad:
            raise ValueError(x)
        return x
    with pytest.raises(ValueError) as e:
        parallel.map_two(fn, list(range(6)))
    assert e.value.args[0] == min(bad)


def test_map_two_inside_map_two_does_not_wait_for_itself():
    import threading
    done = []

    def outer():
        done.append(parallel.map_two(lambda x: sum(parallel.map_two(lambda y: x * y, [1, 2, 3])), list(range(6))))
    t = threading.Thread(target=outer, daemon=True)
    t.start()
    t.join(10)
    assert done == [[6 * x for x in range(6)]]       # a worker waiting for itself never finishes


def test_in_blocks_calls_each_block_once_on_two_threads_from_parallel_corners_rows(monkeypatch):
    seen = {}
    parallel.in_blocks(lambda s: seen.setdefault(s, threading.get_ident()), 10, 3)
    assert sorted(seen) == [0, 3, 6, 9] and len(set(seen.values())) == 1      # few rows: this thread
    monkeypatch.setattr(parallel, "PARALLEL_CORNERS", 10)
    calls = []
    monkeypatch.setattr(parallel, "map_two", lambda fn, items, threaded: calls.append((list(items), threaded)))
    parallel.in_blocks(print, 10, 4)
    assert calls == [([0, 4, 8], True)]


def _tangents(rows):
    from addon.codec.formats.unigine import tangent
    rng = np.random.default_rng(3)
    n, t = rng.normal(size=(50, 3)), rng.normal(size=(50, 3))
    n[4], t[9] = 0.0, n[9]                        # a zero normal and a tangent along its normal
    sign = np.where(rng.random(50) < 0.5, -1.0, 1.0)
    picked = rng.permutation(50)[:37] if rows else None
    # `out` filled with a value no frame encodes to: a row no block writes shows
    return tangent, "_BLOCK", lambda: tangent.encode(n, t, sign, picked, np.full((37 if rows else 50, 4), -32768, np.int16))


def _normals(v1):
    from addon.codec.formats.ultimate3d import normals
    n = np.random.default_rng(4).normal(size=(41, 3)).astype(np.float32)
    n[5] = 0.0                                    # a zero normal becomes +Y
    return normals, "BLOCK", lambda: normals.encode_xyz(n[:, 0], n[:, 1], n[:, 2], v1)


def _unit_rows(_):
    from addon.codec.formats.unigine import geometry
    v = np.random.default_rng(5).normal(size=(30, 3)).astype(np.float32)
    v[7] = 0.0                                    # a zero row stays zero
    return geometry, "_BLOCK", lambda: geometry._normalize(v)


@pytest.mark.parametrize("case,arg", [(_tangents, False), (_tangents, True), (_normals, False), (_normals, True),
                                      (_unit_rows, None)])
def test_work_in_blocks_on_two_threads_gives_the_whole_array_result(monkeypatch, case, arg):
    module, block, run = case(arg)
    monkeypatch.setattr(module, block, 10 ** 9)
    whole = run()
    monkeypatch.setattr(module, block, 4)
    monkeypatch.setattr(parallel, "PARALLEL_CORNERS", 0)
    handed = []
    real = parallel.map_two
    monkeypatch.setattr(parallel, "map_two", lambda fn, items, threaded=True: handed.append((len(items), threaded))
                        or real(fn, items, threaded))
    np.testing.assert_array_equal(run(), whole)
    assert len(handed) == 1 and handed[0][0] > 2 and handed[0][1]      # several blocks, shared by two threads


def test_a_begun_map_starts_on_the_worker_at_once_and_hands_results_out_in_order():
    started, calls = threading.Event(), []

    def fn(x):
        calls.append((x, threading.get_ident()))
        started.set()
        return x * 10
    begun = parallel.begin_two(fn, list(range(8)))
    assert started.wait(5)                        # the worker took an item before anyone asked for results
    assert calls[0][1] != threading.get_ident()
    out = []
    for r in begun.in_order():
        out.append(r)
        assert parallel.map_two(lambda y: y + 1, [1, 2, 3]) == [2, 3, 4]     # meanwhile: runs as a loop, no wait
    assert out == [x * 10 for x in range(8)]


def test_a_begun_map_left_early_stops_the_worker_before_it_returns():
    calls = []

    def fn(x):
        calls.append(x)
        time.sleep(0.002)
        return x
    begun = parallel.begin_two(fn, list(range(200)))
    results = begun.in_order()
    assert next(results) == 0
    results.close()                               # the consumer stops: the worker takes no further item
    seen = len(calls)
    time.sleep(0.05)
    assert seen < 50 and len(calls) == seen


def test_a_loop_too_small_to_share_leaves_the_worker_to_what_its_items_call():
    inner = {}

    def slow(y):
        time.sleep(0.002)
        inner.setdefault(y, threading.get_ident())
    assert parallel.map_two(lambda x: parallel.map_two(slow, list(range(20))) and x, [7], threaded=False) == [7]
    assert len(set(inner.values())) == 2          # one item, not shared: its own map_two still uses both threads
