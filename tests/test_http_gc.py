"""The HTTP server's heap settings after its warm-up (server/http.py settle_heap): the warm objects frozen, young
collections less often, and cyclic garbage still collected without an explicit gc.collect()."""

import gc
import weakref

from gpu_advisor.server.http import GC_GEN0_THRESHOLD, settle_heap


class Node:
    def __init__(self) -> None:
        self.other: "Node | None" = None


def test_settle_heap_freezes_the_warm_heap_and_keeps_collecting_cycles() -> None:
    before = gc.get_threshold()
    was_enabled = gc.isenabled()
    gc.enable()
    try:
        settle_heap()
        assert gc.get_freeze_count() > 0
        assert gc.get_threshold() == (GC_GEN0_THRESHOLD, *before[1:])
        freed = [0]

        def count() -> None:
            freed[0] += 1

        made = 5 * GC_GEN0_THRESHOLD // 2  # pairs: 5 x the threshold in container objects
        for _ in range(made):
            a, b = Node(), Node()
            a.other, b.other = b, a
            weakref.finalize(a, count)
            del a, b
        # unreachable cycles are freed by the collector on its own, not only by an explicit gc.collect()
        assert freed[0] >= made // 2, f"{freed[0]} of {made} cycles collected"
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)
        if not was_enabled:
            gc.disable()
