"""What a long-running compile freezes out of the cyclic collector's sight, and when it gives it
back (core/wiki/collector.py): frozen garbage is collected once the process is idle, or once
the last collection is old enough when work never pauses, and nothing stays frozen after stop."""

from __future__ import annotations

import gc
import time
import weakref

from groundwiki.core.wiki.collector import Collector


class _Cycle:
    def __init__(self) -> None:
        self.me = self  # only the cyclic collector can free it


def _frozen_cycle(collector: Collector) -> weakref.ref[_Cycle]:
    cycle = _Cycle()
    alive = weakref.ref(cycle)
    collector.build_starts(serving=True)
    collector.build_ends(serving=True)  # frozen with everything else alive
    del cycle
    return alive


def _gone(alive: weakref.ref[_Cycle], within_s: float) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if alive() is None:
            return True
        time.sleep(0.02)
    return False


def test_frozen_garbage_is_collected_once_idle_and_not_while_work_goes_on():
    collector = Collector(idle_s=0.3)
    try:
        alive = _frozen_cycle(collector)
        gc.collect()  # an ordinary collection does not walk what is frozen
        assert alive() is not None and gc.get_freeze_count() > 0
        for _ in range(4):  # work keeps coming faster than the idle time: no collection
            time.sleep(0.1)
            collector.build_starts(serving=True)
            collector.build_ends(serving=True)
        assert alive() is not None
        assert _gone(alive, 3.0)  # idle: collected
    finally:
        collector.stop()
    assert gc.get_freeze_count() == 0


def test_work_that_never_pauses_still_has_its_garbage_collected():
    collector = Collector(idle_s=60.0, every_s=0.0)  # the last collection is always old
    try:
        alive = _frozen_cycle(collector)
        assert _gone(alive, 5.0)
    finally:
        collector.stop()
