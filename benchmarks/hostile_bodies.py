"""Hostile bodies: how long can one request hold the replay server's event loop?

A ``MockServer`` (one cassette with an interaction at the requests' path, recorded with
another JSON body: every body is parsed, journaled and keyed for matching, then answered 404)
runs in this process's event loop, next to a loop-lag probe (a 1 ms sleep
in a loop; its lateness is how long something else held the loop). A client in another
process sends, one kind at a time and ``RUNS`` times each:

* ``baseline``: small JSON chat requests (what every test sends);
* ``32 MiB body``: a body of the default maximum size (read, digested for the journal);
* ``over the limit``: a ``Content-Length`` of 1 GiB (refused with 413 before reading);
* ``1 MiB of tiny JSON items``: the worst body parsed as JSON (the largest parsed,
  :data:`~ssemock.limits.MAX_JSON_PARSE`, with the most nodes per byte);
* ``JSON 990 deep``: refused with 400;
* ``GET full journal``: ``GET /_ssemock/requests`` once the journal holds 1,000 entries
  (100 with ``--quick``) with 60 KB JSON bodies each (just under the 64 KiB journal body limit).

Figures: the worst loop lag while each kind is handled, in ms, against the worst lag
while baseline requests are handled in the same run. Goal (issue "bounded input"): no
request blocks the loop for more than 100 ms.

Run: ``python -m benchmarks.hostile_bodies [--quick]`` (one JSON line per figure).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from typing import Any

from benchmarks import figure
from ssemock import Cassette, Chunk, Interaction, MockServer, Request, Response
from ssemock.limits import JOURNAL_CAPACITY, MAX_JSON_PARSE, MAX_REQUEST_BODY

PATH = "/v1/no-cassette-answers-this"
GOAL_MS = 100.0

# The client: reads "KIND COUNT" lines on stdin, sends COUNT requests of that kind, prints their statuses.
_CLIENT = r"""
import json, socket, sys
import httpx
url = sys.argv[1]
host, port = url.split("//")[1].split(":")
bodies = {
    "baseline": json.dumps({"model": "gpt-4o", "stream": True,
                            "messages": [{"role": "user", "content": "hi"}]}).encode(),
    "32 MiB body": b"x" * int(sys.argv[2]),
    "1 MiB of tiny JSON items": b"[" + b"0," * ((int(sys.argv[3]) - 3) // 2) + b"0]",  # at most the limit
    "JSON 990 deep": b"[" * 990 + b"]" * 990,
}
with httpx.Client(timeout=120) as client:
    for line in sys.stdin:
        kind, count = line.rsplit(" ", 1)
        statuses = []
        for _ in range(int(count)):
            if kind == "fill":
                body = json.dumps({"messages": [{"role": "user", "content": "x" * 60_000}]}).encode()
                statuses.append(client.post(url + sys.argv[4], content=body).status_code)
            elif kind == "GET full journal":
                statuses.append(client.get(url + "/_ssemock/requests").status_code)
            elif kind == "over the limit":
                with socket.create_connection((host, int(port))) as sock:
                    sock.sendall(b"POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 1073741824\r\n\r\n")
                    statuses.append(int(sock.recv(100).split(b" ")[1]))
            else:
                statuses.append(client.post(url + sys.argv[4], content=bodies[kind]).status_code)
        print(json.dumps(statuses), flush=True)
"""


def _cassette() -> Cassette:
    """One interaction at ``PATH`` with a JSON body no request sends: every body is keyed for
    matching (its canonical JSON text digested), as in a server replaying a real recording."""
    request = Request(method="POST", path=PATH, body=b'{"model": "gpt-4o", "messages": []}')
    response = Response(status=200, headers=[("content-type", "text/event-stream")],
                        chunks=[Chunk(0.0, b"data: {}\n\n")])
    return Cassette("hostile", [Interaction(request, response)])


async def _measure(quick: bool) -> dict[str, tuple[float, list[int]]]:
    runs = 2 if quick else 5
    kinds = ["baseline", "32 MiB body", "over the limit", "1 MiB of tiny JSON items", "JSON 990 deep",
             "GET full journal"]
    worst: dict[str, tuple[float, list[int]]] = {}
    async with MockServer([_cassette()], scenarios=[], timing_scale=0) as server:
        loop = asyncio.get_running_loop()
        lag = [0.0]

        async def probe() -> None:
            while True:
                started = loop.time()
                await asyncio.sleep(0.001)
                lag[0] = max(lag[0], loop.time() - started - 0.001)

        task = asyncio.create_task(probe())
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-c", _CLIENT, server.url, str(MAX_REQUEST_BODY), str(MAX_JSON_PARSE), PATH,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        )
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(f"fill {100 if quick else JOURNAL_CAPACITY}\n".encode())  # for "GET full journal"
            await proc.stdin.drain()
            await proc.stdout.readline()
            for kind in kinds * (1 if quick else 2):  # interleaved: a busy machine slows every kind alike
                await asyncio.sleep(0.05)
                lag[0] = 0.0
                proc.stdin.write(f"{kind} {runs}\n".encode())
                await proc.stdin.drain()
                statuses = json.loads(await proc.stdout.readline())
                previous = worst.get(kind, (0.0, []))
                worst[kind] = (max(previous[0], lag[0]), previous[1] + statuses)
        finally:
            proc.stdin.close()
            await proc.wait()
            task.cancel()
    return worst


def run(quick: bool = False) -> list[dict[str, Any]]:
    """The figures (see the module docstring)."""
    worst = asyncio.run(_measure(quick))
    base_ms = worst.pop("baseline")[0] * 1000
    expected = {"32 MiB body": 404, "over the limit": 413, "1 MiB of tiny JSON items": 404, "JSON 990 deep": 400,
                "GET full journal": 200}
    figures = []
    for kind, (seconds, statuses) in worst.items():
        answered = set(statuses) == {expected[kind]}
        figures.append(figure(
            f"hostile_bodies: worst loop lag, {kind}" + ("" if answered else f" (answers {sorted(set(statuses))})"),
            seconds * 1000, "ms", baseline=base_ms, goal=f"<= {GOAL_MS:g} ms",
            met=answered and seconds * 1000 <= GOAL_MS,
        ))
    return figures


if __name__ == "__main__":
    for fig in run(quick="--quick" in sys.argv):
        print(json.dumps(fig))
