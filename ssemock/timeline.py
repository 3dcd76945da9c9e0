"""One loop timer for all the timed writes of a server: the deadlines of every stream in one heap.

A replay of N concurrent timed streams has N deadlines pending at any time. With one asyncio timer
per deadline (``asyncio.sleep``, ``loop.call_at``), each is a ``TimerHandle`` in the loop's heap,
ordered by a comparison written in Python, and each wakes its own task, which then writes one
chunk. A :class:`Timeline` keeps the deadlines as ``(seconds, order, sleeper)`` tuples in a heap of
its own (compared in C) and holds one loop timer, at the earliest deadline. When it fires, every
sleeper whose deadline has come is called (:meth:`Sleeper.due`) from that one callback, in
deadline order (equal deadlines in the order they were set), each once: a sleeper that sets its
next deadline during a firing is called at the next one, after the loop has served its I/O once,
even when that deadline has passed (a stream behind its schedule does its catching up in its own
call, boundedly): a sleeper may write its chunk there
and then, with no task switch (:class:`ssemock.send` does for plain timed replays).

Never early: a sleeper is called no sooner than asyncio would wake an ``asyncio.sleep`` to the
same deadline. No busy wait either: asyncio's timers wake up to about 1 ms late (epoll waits in
whole milliseconds), and since every deadline of a stream counts from its request's arrival, a
late wake-up never accumulates. Spinning through the last millisecond cost twice the CPU per timed
stream of a bare aiohttp handler, without better gap errors under load.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import math
import time
from typing import Protocol

__all__ = ["Sleeper", "Timeline"]

_RESOLUTION = time.get_clock_info("monotonic").resolution
"""asyncio runs a timer when its time is less than this far ahead (``BaseEventLoop._clock_resolution``)."""

_COMPACT_AT = 64
"""Sleepers gone from the heap's middle before it may be rebuilt without them (when they are most of it)."""

class Sleeper(Protocol):
    """What waits on a :class:`Timeline`."""

    def due(self) -> None:
        """Called once its deadline has come, from the loop; must not raise (a sleeper keeps its own
        errors). It may set its next deadline (:meth:`Timeline.at`)."""

    @property
    def gone(self) -> bool:
        """True once it no longer waits (given up): then it is dropped, not called."""


class _Waiter:
    """A future as a sleeper, for :meth:`Timeline.sleep_until`."""

    __slots__ = ("future",)

    def __init__(self, future: asyncio.Future[None]) -> None:
        self.future = future

    def due(self) -> None:
        if not self.future.done():
            self.future.set_result(None)

    @property
    def gone(self) -> bool:
        return self.future.done()


class Timeline:
    """The deadlines (loop time, seconds) of a server's timed writes, woken by one loop timer.

    Used from the loop's own thread only. A sleeper that gives up before its deadline makes itself
    :attr:`Sleeper.gone` and calls :meth:`forget`, so that the heap does not keep it until then
    (clients who leave during long pauses leave nothing behind).
    """

    __slots__ = ("_firing", "_gone", "_heap", "_later", "_next", "_order", "_timer")

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, Sleeper]] = []
        self._order = itertools.count()
        self._timer: asyncio.TimerHandle | None = None
        self._next = math.inf
        """The loop time the timer is set for (``inf``: no timer)."""
        self._gone = 0
        """forget() calls less the gone sleepers dropped (by compaction, or popped): the gone sleepers
        in the heap once every forget() due has come."""
        self._firing = False
        self._later: list[tuple[float, int, Sleeper]] = []
        """Sleepers set during a firing: into the heap once it is over."""

    def __len__(self) -> int:
        """Sleepers waiting (gone ones not yet dropped included)."""
        return len(self._heap) + len(self._later)

    def at(self, loop: asyncio.AbstractEventLoop, deadline: float, sleeper: Sleeper) -> None:
        """Call ``sleeper.due()`` at ``deadline`` (loop time, seconds), unless it is gone by then."""
        if self._firing:
            self._later.append((deadline, next(self._order), sleeper))
            return
        heapq.heappush(self._heap, (deadline, next(self._order), sleeper))
        if deadline < self._next:
            self._arm(loop, deadline)

    def forget(self) -> None:
        """One sleeper in the heap is now gone. Once gone ones are most of the heap, it is rebuilt
        without them (all of them: at once)."""
        self._gone += 1
        heap = self._heap
        if self._gone >= len(heap) or (self._gone > _COMPACT_AT and 2 * self._gone > len(heap)):
            kept = [entry for entry in heap if not entry[2].gone]
            # Sleepers dropped here whose forget() is still to come (cancelled in the same loop turn)
            # bring the count back up to 0 when it comes.
            self._gone -= len(heap) - len(kept)
            heap[:] = kept
            heapq.heapify(heap)
            if not heap and self._timer is not None:
                self._timer.cancel()
                self._timer, self._next = None, math.inf

    async def sleep_until(self, loop: asyncio.AbstractEventLoop, deadline: float) -> None:
        """Sleep until ``deadline`` (loop time, seconds); returns at once when it has passed."""
        if deadline <= loop.time():
            return
        waiter = _Waiter(loop.create_future())
        self.at(loop, deadline, waiter)
        await self.wait(waiter.future)

    async def wait(self, done: asyncio.Future[None]) -> None:
        """Await ``done``, the future of a sleeper set on this timeline; when the wait is given up
        (cancelled) before the sleeper was called, :meth:`forget` it."""
        try:
            await done
        except BaseException:
            if done.cancelled():  # given up before its time: still in the heap
                self.forget()
            raise

    def _arm(self, loop: asyncio.AbstractEventLoop, deadline: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = loop.call_at(deadline, self._fire, loop)
        self._next = deadline

    def _fire(self, loop: asyncio.AbstractEventLoop) -> None:
        self._timer, self._next = None, math.inf
        heap = self._heap
        now = loop.time() + _RESOLUTION
        self._firing = True
        try:
            while heap and heap[0][0] < now:
                sleeper = heapq.heappop(heap)[2]
                if sleeper.gone:
                    self._gone -= 1  # (below 0 until its forget() comes)
                else:
                    sleeper.due()
        finally:
            self._firing = False
            for entry in self._later:
                heapq.heappush(heap, entry)
            self._later.clear()
            if heap:
                self._arm(loop, heap[0][0])
