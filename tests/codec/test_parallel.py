"""parallel.map_two: the same results, in order, as a loop; the loop's first exception."""
import threading

import pytest

from addon.codec import parallel


@pytest.mark.parametrize("n", [0, 1, 2, 7])
def test_map_two_gives_what_a_loop_gives_in_order(n):
    items = list(range(n))
    assert parallel.map_two(lambda x: x * x, items) == [x * x for x in items]


def test_map_two_uses_a_second_thread_for_every_other_item():
    seen = {}
    parallel.map_two(lambda x: seen.setdefault(x, threading.get_ident()), list(range(6)))
    assert len({seen[0], seen[2], seen[4]}) == 1 and len({seen[1], seen[3], seen[5]}) == 1
    assert seen[0] != seen[1]


@pytest.mark.parametrize("bad", [[1, 4], [4, 1], [3], [0, 5]])
def test_map_two_raises_the_first_error_in_item_order(bad):
    def fn(x):
        if x in bad:
            raise ValueError(x)
        return x
    with pytest.raises(ValueError) as e:
        parallel.map_two(fn, list(range(6)))
    assert e.value.args[0] == min(bad)
