"""parallel.map_two: the same results, in order, as a loop; the loop's first exception."""
import threading

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
