"""The replay server's long computations, run off its event loop on a few threads.

Applying a scenario's steps to a large plan, synthesizing a stub's long answer and scoring the
stubs closest to a request are pure Python and may take seconds. Each server runs them on at
most :data:`PLAN_THREADS` daemon threads of its own, started on first use, fed from one queue:

* the event loop's thread shares the interpreter with at most :data:`PLAN_THREADS` threads,
  however many such requests arrive, so it goes on answering the others (with a thread per
  request, 200 requests at once held up a health check for 30 s: 200 threads took turns
  with it);
* work queued for a request whose client left, or cut by a stop, never runs; work already
  running is told through its ``cancelled`` event (it may stop early) and its result dropped;
* the threads never keep the process from exiting (daemon threads: ``asyncio.to_thread``'s
  executor is joined when the event loop closes and when the interpreter exits).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    import queue

__all__ = ["PLAN_THREADS", "OffLoop"]

_T = TypeVar("_T")

PLAN_THREADS = 2
"""Threads per replay server applying scenarios, synthesizing long stub answers and scoring stubs:
at most this many such computations run at once, the others wait in order. They hold the
interpreter most of the time, so more threads would not finish them sooner; they would only
take more turns from the event loop."""


class _Job(Generic[_T]):
    """One piece of work, the future its handler awaits, and its handler's ``cancelled`` flag."""

    __slots__ = ("cancelled", "done", "loop", "work")

    def __init__(self, work: Callable[[threading.Event], _T], loop: asyncio.AbstractEventLoop,
                 done: asyncio.Future[_T]) -> None:
        self.work = work
        self.loop = loop
        self.done = done
        self.cancelled = threading.Event()

    def run(self) -> None:
        """Run the work unless cancelled meanwhile; hand its result (or exception) to the loop."""
        if self.cancelled.is_set():  # its client left while it waited: never run
            return
        error: BaseException | None = None
        result: Any = None
        try:
            result = self.work(self.cancelled)
        except BaseException as exc:  # raised again in the handler
            error = exc
        if not self.cancelled.is_set():
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                self.loop.call_soon_threadsafe(self._settle, error, result)

    def _settle(self, error: BaseException | None, result: Any) -> None:
        if not self.done.done():
            self.done.set_exception(error) if error is not None else self.done.set_result(result)


class OffLoop:
    """A queue and at most ``threads`` daemon threads running work for one server's event loop.

    Args:
        threads: how many pieces of work may run at once (default :data:`PLAN_THREADS`).
        name: the threads' name (shown by debuggers and ``py-spy``).
    """

    def __init__(self, threads: int = PLAN_THREADS, *, name: str = "ssemock-plan") -> None:
        if threads < 1:
            raise ValueError(f"threads must be >= 1, got {threads}")
        self.threads = threads
        self.name = name
        self._queue: queue.SimpleQueue[_Job[Any] | None] | None = None  # made on first use, as the threads
        self._running: list[threading.Thread] = []

    async def run(self, work: Callable[[threading.Event], _T]) -> _T:
        """``work(cancelled)`` run on one of the threads, once one is free; returns its result.

        When the waiting coroutine is cancelled (its client left, or the server stops),
        ``cancelled`` is set: work still queued never runs, work running may check
        ``cancelled.is_set()`` and stop early; either way its result is dropped.

        Raises:
            BaseException: whatever ``work`` raised.
        """
        loop = asyncio.get_running_loop()
        job: _Job[_T] = _Job(work, loop, loop.create_future())
        self._started().put(job)
        try:
            return await job.done
        finally:
            job.cancelled.set()

    def _started(self) -> queue.SimpleQueue[_Job[Any] | None]:
        """The queue, its missing threads started (on first use: a server that never needs them
        makes neither, nor imports :mod:`queue`)."""
        jobs = self._queue
        if jobs is None:
            import queue

            jobs = self._queue = queue.SimpleQueue()
        while len(self._running) < self.threads:
            thread = threading.Thread(target=self._serve, args=(jobs,), name=f"{self.name}-{len(self._running)}",
                                      daemon=True)
            thread.start()
            self._running.append(thread)
        return jobs

    @staticmethod
    def _serve(jobs: queue.SimpleQueue[_Job[Any] | None]) -> None:
        while (job := jobs.get()) is not None:
            job.run()
            del job  # its result may be large: not kept while waiting for the next

    def close(self) -> None:
        """Let the threads end once the work queued before has been run or skipped (not waiting for them)."""
        if self._queue is not None:  # else no thread was started
            for _ in self._running:
                self._queue.put(None)
        self._running.clear()
