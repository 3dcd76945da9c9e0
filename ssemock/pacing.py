"""Pacing: each chunk boundary of a plan reaches the client as the end of a read, at every timing scale.

Written back to back, two chunks reach a socket-level reader (aiohttp ``iter_any()``, a
``recv`` loop, ``requests``, Go) merged in one read: the boundary a fragmentation step made, or
a recorded one, is lost. So before each write that starts a new chunk, the sending layer waits
until the client has read the chunk before (:mod:`ssemock.edge.reads`: for a client on this
machine the kernel tells), at most :data:`READ_WAIT` seconds; where the client's reads cannot be
seen it waits ``pace`` seconds after the previous write instead (:data:`DEFAULT_PACE`, enough
on a loaded 2-core machine for a reader in another process; see ``benchmarks/fragment_delivery.py``).
The time timing scale 0 takes out is the recorded waiting, never the boundaries.

Which plans are paced: those with a fragmentation step (``plan.pace > 0``), at any timing
scale; every recorded answer sent faster than recorded (timing scale below 1), whose recorded
gaps may be too short to keep their boundaries; and every recording without timing (imported
from VCR.py, raw bodies), whose chunks would otherwise go back to back at any scale. At scale 1
or more without a fragmentation step the recorded times alone decide (faithful replay). A stub's
synthesized events (one chunk each) are paced only under a fragmentation step (``plan.budget`` is
0 otherwise): their boundaries are ours, not the provider's, and keeping thousands of them costs a
Python client about 0.1-0.2 ms each.

Bound: the waiting of one response is at most its ``plan.budget`` seconds (default
:data:`DEFAULT_BUDGET`, at most :data:`MAX_BUDGET`); once spent, the remaining chunks go out
back to back and the journal says from which chunk on.
"""

from __future__ import annotations

import asyncio
from typing import Any

from .edge.reads import ClientReads, client_reads
from .limits import DEFAULT_BUDGET, DEFAULT_PACE, MAX_BUDGET

__all__ = ["DEFAULT_BUDGET", "DEFAULT_PACE", "MAX_BUDGET", "READ_WAIT", "Pacing"]

READ_WAIT = 0.1
"""Seconds one boundary waits at most for a client on this machine to read the chunk before it
(a client that does not read then costs the budget, not the whole stream's time)."""
_SPINS = 50
"""Turns of the event loop a boundary waits without a timer (about a millisecond: a reader that is
running takes its read in tens of microseconds), before it polls after 1, 2, 4, 8 and then every 16 ms."""
_POLL = 0.001


class Pacing:
    """The pacing of one response's chunk boundaries (see the module docstring).

    Args:
        sock: the server's socket of the connection (``transport.get_extra_info("socket")``), or None.
        pace: ``plan.pace``, seconds (0: no fragmentation step asked for pacing).
        timing_scale: ``plan.timing_scale``.
        budget: seconds of waiting this response gets at most.
        timed: the recording kept its timing (``Response.timed``); one that did not (VCR.py, HAR
            without timings) has no recorded gap to keep its boundaries, at any scale.
        loop: the running loop.
    """

    def __init__(self, sock: Any, pace: float, timing_scale: float, budget: float,
                 loop: asyncio.AbstractEventLoop, *, timed: bool = True) -> None:
        self.on = pace > 0 or timing_scale < 1 or not timed
        """Whether the next boundary is paced (False once the budget is spent)."""
        self.pace = pace or DEFAULT_PACE
        self.budget = budget
        self.left = budget
        self.loop = loop
        self.reads: ClientReads | None = client_reads(sock) if self.on and budget > 0 else None
        self.boundaries = 0
        """Boundaries paced so far."""
        self.unread = 0
        """Boundaries where a visible client had not read the chunk before after :data:`READ_WAIT`."""
        self.waited = 0.0
        self.spent_at: int | None = None
        """The index of the first chunk sent unpaced because the budget was spent."""
        if budget <= 0:  # a plan whose boundaries are not to be kept (a stub's; ``fragment.pace: 0``)
            self.on = False

    async def boundary(self, index: int, last_write: float) -> None:
        """Wait before writing chunk ``index`` (> 0) until the client has read everything written
        (at most :data:`READ_WAIT` seconds), or, where its reads cannot be seen, until ``pace``
        seconds after ``last_write`` (loop time); within the budget."""
        if not self.on:
            return
        loop = self.loop
        start = loop.time()
        until = start + min(self.left, READ_WAIT) if self.reads else min(last_write + self.pace, start + self.left)
        if self.reads is None:
            if until > start:
                await asyncio.sleep(until - start)
        else:
            await self._read(until)
        spent = loop.time() - start
        self.boundaries += 1
        self.waited += spent
        self.left -= spent
        if self.left <= 0:
            self.on, self.spent_at = False, index + 1

    async def _read(self, until: float) -> None:
        assert self.reads is not None
        turns = 0
        while self.reads.unread():  # 0: all read; None: the connection is gone (the write will say)
            now = self.loop.time()
            if now >= until:
                self.unread += 1
                return
            # a reader that does not take its read at once is polled less and less often: a stalled
            # client costs close to nothing while its boundary waits
            await asyncio.sleep(0 if turns < _SPINS else min(_POLL * 2 ** min(turns - _SPINS, 4), until - now))
            turns += 1

    def notes(self, chunks: int) -> list[str]:
        """What the pacing could not do, for the journal's ``injected`` (``chunks``: the response's
        count): nothing when every boundary waited for the client's read."""
        unpaced = chunks - self.spent_at if self.spent_at is not None else 0
        spent = unpaced > 0
        if not (spent or self.unread or (self.boundaries and self.reads is None)):
            return []
        how = ("each waited for the client's read" if self.reads
               else f"{self.pace:g} s apart (the client's reads cannot be seen from this machine)")
        line = f"pacing: {self.boundaries} chunk boundaries, {how}, {self.waited:.3f} s in all"
        if self.unread:
            line += f"; at {self.unread} of them the client had not read after {READ_WAIT:g} s"
        if spent:
            line += (f"; the pacing budget of {self.budget:g} s was spent: the last {unpaced} of "
                     f"{chunks} chunks went back to back")
        return [line]
