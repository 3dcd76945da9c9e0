"""Real SSE clients reading the replay server: our decoder over httpx, httpx-sse, node's
eventsource-parser, and the bundled recordings' streams as requests."""

from __future__ import annotations

import gzip
import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import httpx_sse

from ssemock import Cassette
from ssemock.sse import Decoder, Event, decode

NODE_DIR = Path(__file__).parent / "node"
Seen = list[tuple[str, str]]  # (event type, data) of each dispatched event


@dataclass(frozen=True)
class Stream:
    """One recorded SSE interaction, as a request that replays it."""

    cassette: str
    index: int
    method: str
    path: str
    body: bytes | None
    recorded: bytes  # the recorded body, content encoding removed

    @property
    def id(self) -> str:
        return f"{self.cassette}#{self.index}"

    def headers(self, scenario: str | None = None) -> dict[str, str]:
        out = {"X-SSEMock-Cassette": self.cassette}
        if self.body is not None:
            out["Content-Type"] = "application/json"
        if scenario:
            out["X-SSEMock-Scenario"] = scenario
        return out

    def truth(self) -> Seen:
        """What a WHATWG parser dispatches from the recorded bytes."""
        return [(e.type, e.data) for e in decode(self.recorded) if isinstance(e, Event)]


def sse_streams(cassettes: dict[str, Cassette]) -> list[Stream]:
    """Every ``text/event-stream`` interaction of ``cassettes`` whose request body tells it apart."""
    out = []
    for name, cassette in sorted(cassettes.items()):
        seen: set[bytes | None] = set()
        for index, inter in enumerate(cassette.interactions):
            resp = inter.response
            if "event-stream" not in (resp.header("content-type") or "") or inter.request.body in seen:
                continue
            seen.add(inter.request.body)
            body = resp.body
            if (resp.header("content-encoding") or "").lower() == "gzip":
                body = gzip.decompress(body)
            out.append(Stream(name, index, inter.request.method, inter.request.path, inter.request.body, body))
    return out


def view(seen: Seen, preserves: str) -> list[tuple[str, Any]]:
    """Events as a scenario promises to keep them: (type, data), or (type, JSON value) for payloads."""
    if preserves != "payloads":
        return list(seen)
    out: list[tuple[str, Any]] = []
    for kind, data in seen:
        try:
            out.append((kind, json.loads(data)))
        except ValueError:
            out.append((kind, data))
    return out


def read_with_decoder(client: httpx.Client, stream: Stream, scenario: str | None) -> Seen:
    """Our incremental decoder, fed each read of ``httpx`` (content encoding undone)."""
    decoder = Decoder()
    items = []
    with client.stream(stream.method, stream.path, content=stream.body, headers=stream.headers(scenario)) as r:
        for part in r.iter_bytes():
            items += decoder.feed(part)
    items += decoder.close()
    return [(e.type, e.data) for e in items if isinstance(e, Event)]


def read_with_httpx_sse(client: httpx.Client, stream: Stream, scenario: str | None) -> Seen:
    """httpx-sse's ``iter_sse``."""
    with httpx_sse.connect_sse(client, stream.method, stream.path, content=stream.body,
                               headers=stream.headers(scenario)) as source:
        return [(sse.event, sse.data) for sse in source.iter_sse()]


def read_with_node(base_url: str, streams: list[Stream], scenario: str | None) -> list[Seen]:
    """node's eventsource-parser over ``fetch`` (tests/node/parse-sse.mjs), one process for all streams."""
    requests = [
        {"url": base_url + s.path, "method": s.method, "headers": s.headers(scenario),
         "body": s.body.decode("utf-8") if s.body is not None else None}
        for s in streams
    ]
    done = subprocess.run(["node", str(NODE_DIR / "parse-sse.mjs")], input=json.dumps(requests).encode(),
                          capture_output=True, timeout=300, check=True)
    results = json.loads(done.stdout)
    return [[(e["event"], e["data"]) for e in r["events"]] for r in results]
