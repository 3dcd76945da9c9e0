"""What ``ssemock inspect`` shows of a cassette: its interactions, chunks, timing and events, as lines.

For each interaction: the request and status, the chunk count and sizes and how the body ended,
``body not recorded: REASON`` when the recorder kept no body, the timing (headers, first chunk,
end, largest gap, in seconds), each chunk's time and size (``chunks``), then the events and
comments of an event stream (decoded from gzip/deflate first) or the first 100 bytes of another body.
"""

from __future__ import annotations

from collections.abc import Iterator

from .cassette import Cassette, Response
from .errors import redacted
from .refusals import BodyNotRecordedError

__all__ = ["describe_cassette"]


def describe_cassette(cassette: Cassette, *, chunks: bool = False) -> Iterator[str]:
    """The lines ``ssemock inspect`` prints for ``cassette`` (``chunks``: one line per chunk too)."""
    from .server import cassette_summary

    summary = cassette_summary(cassette)
    yield f"cassette {cassette.name}: {len(cassette.interactions)} interaction(s)"
    for key, value in cassette.provenance.items():
        yield f"  {key}: {value}"
    for key, paths in (("ignore_body", cassette.ignore_body), ("dropped_body", cassette.dropped_body)):
        if paths:
            yield f"  match {key}: {', '.join(paths)}"
    for index, (inter, line) in enumerate(zip(cassette.interactions, summary["interactions"])):
        resp = inter.response
        yield ""
        yield f"#{index} {line['request']} -> {resp.status} {line['content_type'] or ''}".rstrip()
        yield from _response_lines(resp, chunks)


def _response_lines(resp: Response, chunks: bool) -> Iterator[str]:
    sizes = [len(c.data) for c in resp.chunks]
    yield (f"  {len(sizes)} chunk(s), {sum(sizes)} bytes, sizes min/max {min(sizes, default=0)}/"
           f"{max(sizes, default=0)}; end: {resp.end.how}")
    if resp.body_not_recorded is not None:
        yield (f"  body not recorded: {redacted(resp.body_not_recorded)} (a replay answers 500 "
               f"{BodyNotRecordedError.code})")
    if resp.timed:
        gaps = [b.t - a.t for a, b in zip(resp.chunks, resp.chunks[1:])]
        first = resp.chunks[0].t if resp.chunks else resp.end.t
        yield (f"  timing: headers {resp.start:.3f} s, first chunk {first:.3f} s, end {resp.end.t:.3f} s, "
               f"largest gap {max(gaps, default=0.0):.3f} s")
    else:
        yield "  timing: none (imported without timing; replayed without delays)"
    if chunks:
        for c in resp.chunks:
            yield f"    t={c.t:.6f}  {len(c.data)} bytes"
    yield from _event_lines(resp.body, resp.header("content-type") or "", resp.header("content-encoding"))


def _event_lines(body: bytes, content_type: str, encoding: str | None) -> Iterator[str]:
    from .importers import decoded_body
    from .sse import Comment, decode

    if encoding and encoding.lower() != "identity":
        plain = decoded_body(body, encoding)
        if plain is None:
            yield f"  body: {len(body)} bytes, {encoding}-encoded (not decodable)"
            return
        body = plain
    if "event-stream" not in content_type:
        yield f"  body: {body[:100].decode('utf-8', 'replace')!r}" + ("…" if len(body) > 100 else "")
        return
    items = decode(body, comments=True)
    events = [i for i in items if not isinstance(i, Comment)]
    yield f"  {len(events)} event(s), {len(items) - len(events)} comment(s):"
    for item in items:
        if isinstance(item, Comment):
            yield f"    : {item.text}"
        else:
            data = item.data if len(item.data) <= 90 else item.data[:89] + "…"
            yield f"    {item.type}: {data}"
