"""Run an asyncio service (a replay server, a recorder) in a thread with its own event loop.

This is what ``with MockServer()`` and ``with Recorder()`` use, so that synchronous code
(``openai.OpenAI``, ``requests``) can talk to a server running beside it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import signal
import threading
from collections.abc import Awaitable, Callable
from typing import TypeVar

__all__ = ["BackgroundLoop", "stop_on_signals"]

T = TypeVar("T")


class BackgroundLoop:
    """A thread running ``start()``, then waiting, then ``stop()``, in its own event loop.

    Args:
        name: the thread's name.
        start: coroutine function that starts the service (its exception is raised by :meth:`run`).
        stop: coroutine function that stops it (its exception is raised by :meth:`close`).
    """

    def __init__(
        self, name: str, start: Callable[[], Awaitable[None]], stop: Callable[[], Awaitable[None]]
    ) -> None:
        self.name = name
        self._start = start
        self._stop = stop
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopped: asyncio.Event | None = None
        self._failure: list[BaseException] = []

    def run(self) -> None:
        """Start the thread and return once ``start()`` finished; raise what it raised."""
        ready = threading.Event()

        def main() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            try:
                loop.run_until_complete(self._start())
                self._stopped = asyncio.Event()
            except BaseException as exc:  # re-raised in the caller's thread
                self._failure.append(exc)
                ready.set()
                loop.close()
                return
            ready.set()
            try:
                loop.run_until_complete(self._stopped.wait())
                loop.run_until_complete(self._stop())
            except BaseException as exc:
                self._failure.append(exc)
            finally:
                loop.close()

        self._thread = threading.Thread(target=main, name=self.name, daemon=True)
        self._thread.start()
        ready.wait()
        if self._failure:
            self._thread.join()
            raise self._failure.pop()

    def close(self, timeout: float = 10.0, *, raise_failure: bool = True) -> None:
        """Ask the service to stop, wait up to ``timeout`` seconds for the thread; raise a stop failure."""
        if self._loop is not None and self._stopped is not None:
            self._loop.call_soon_threadsafe(self._stopped.set)
        if self._thread is not None:
            self._thread.join(timeout=timeout)
        self._thread = self._loop = self._stopped = None
        if self._failure and raise_failure:
            raise self._failure.pop()

    def call(self, fn: Callable[[], T]) -> T:
        """Run ``fn()`` in the service's loop (between two steps of anything in flight) and return
        its result; called from the loop's own thread, or when it is not running, call it directly."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None or threading.current_thread() is thread or not loop.is_running():
            return fn()
        done: concurrent.futures.Future[T] = concurrent.futures.Future()

        def run() -> None:
            try:
                done.set_result(fn())
            except BaseException as exc:
                done.set_exception(exc)

        loop.call_soon_threadsafe(run)
        return done.result()

    def call_soon(self, fn: Callable[[], object]) -> None:
        """Run ``fn()`` in the service's loop without waiting for it: before anything the loop
        receives after this call (its callbacks run in the order they were scheduled, ahead of
        the input that arrives meanwhile). When the loop is not running, or from its own thread,
        ``fn()`` runs now. ``fn`` should not raise: the loop would only log the exception."""
        loop, thread = self._loop, self._thread
        if loop is not None and thread is not None and threading.current_thread() is not thread \
                and loop.is_running():
            try:
                loop.call_soon_threadsafe(fn)
                return
            except RuntimeError:  # closed meanwhile
                pass
        fn()


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def stop_on_signals() -> asyncio.Event:
    """An event of the running loop that SIGINT or SIGTERM sets (how ``serve`` and ``record`` stop).

    After the first signal, a second one ends the process at once, by that signal (status
    ``-SIGNAL``, shell status 128 + SIGNAL), however busy the event loop is.
    """
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()

    def first() -> None:
        for sig in STOP_SIGNALS:
            loop.remove_signal_handler(sig)
            signal.signal(sig, _exit_now)
        stop.set()

    for sig in STOP_SIGNALS:
        loop.add_signal_handler(sig, first)
    return stop


def _exit_now(signum: int, frame: object) -> None:
    """The second stop signal: die by it now (``os.write``: safe inside a signal handler)."""
    os.write(2, f"ssemock: {signal.Signals(signum).name} again: exiting now\n".encode())
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)
