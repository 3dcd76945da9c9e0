"""The lock that puts the run-time changes of all ``--workers`` processes in one order.

Each worker that receives a change (:mod:`ssemock.change_routes`) holds this lock while it reads the
change, applies it and hands it to the other workers (:mod:`ssemock.workers`), so every worker applies
the changes in the same order and ends in the same state, however many are sent at once. The lock is
an exclusive ``flock(2)`` on a file of the workers' private directory: the kernel releases it when the
holding process dies (``kill -9`` included), and each holder opens the file anew, so two requests in
one worker exclude each other too.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
from collections.abc import AsyncIterator
from pathlib import Path

from .refusals import ChangeBusyError

__all__ = ["CHANGE_WAIT", "LOCK_FILE", "hold_change_lock"]

LOCK_FILE = "changes.lock"
CHANGE_WAIT = 30.0
"""Seconds a change waits for the changes before it (a change held longer than this by a worker whose
event loop does not run is ``503 ssemock_change_busy``, and this one is not made)."""
_POLL = 0.005


@contextlib.asynccontextmanager
async def hold_change_lock(directory: Path, what: str, wait: float = CHANGE_WAIT,
                           queue: asyncio.Lock | None = None) -> AsyncIterator[None]:
    """Hold the workers' change lock in ``directory`` for the body of the ``async with``, waiting for it
    at most ``wait`` seconds (polled without blocking the event loop). ``queue``: this process's lock, taken
    first, so the changes one worker receives wait in the order they came and one of them at a time polls
    the file (hundreds sent at once then cost no more than one).

    Raises:
        ChangeBusyError: the lock was held by other changes for ``wait`` seconds; ``what`` names this
            change in the message.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + wait
    async with contextlib.AsyncExitStack() as stack:
        if queue is not None:
            try:
                async with asyncio.timeout_at(deadline):
                    await queue.acquire()
            except TimeoutError:
                raise ChangeBusyError(what, wait) from None
            stack.callback(queue.release)
        lock = stack.enter_context(open(directory / LOCK_FILE, "ab"))  # noqa: SIM115 - closed by the stack
        while True:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if loop.time() >= deadline:
                    raise ChangeBusyError(what, wait) from None
                await asyncio.sleep(_POLL)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
