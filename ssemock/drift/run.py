"""Asking the provider again: each recorded request sent through a :class:`~ssemock.recorder.Recorder`.

The recorder (record mode ``all``, cassettes in a temporary directory) is the one that ``ssemock record``
runs: its upstream session, relay, tee and secret filter, and its bounds on a request. The drift client
sends it each recorded request (method, path, query, headers, body as recorded, plus the
:attr:`DriftOptions.headers`, e.g. the credentials), reads the answer within
:attr:`DriftOptions.max_response` bytes and :attr:`DriftOptions.timeout` seconds, and reads the recorder's
new cassette: that recording, scrubbed as any recording is, is compared with the old one by shape
(:mod:`.shape`, :mod:`.compare`). Requests go one at a time, in order (the provider's rate limits, and
timing that is not blurred by other streams).

The extra headers are request headers the recorder's filter drops (:class:`~ssemock.redact.Filter`
``request_headers``): their values are credentials sent, replaced wherever they appear in the answer,
and never printed nor written.
"""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from urllib.parse import urlencode

import aiohttp

from ..cassette import Cassette, Interaction, load
from ..limits import MAX_CHECK_SIZE
from ..matching import describe
from ..recorder import Recorder
from ..recorder.relay import HOP_BY_HOP
from ..redact import Filter
from .compare import Finding, Tolerance, compare
from .shape import shape_of

__all__ = ["DriftOptions", "Outcome", "replay_all"]


@dataclass(frozen=True)
class DriftOptions:
    """How ``ssemock drift`` asks the provider.

    Attributes:
        target: the provider's base URL (user info, if any, sent as basic auth as the recorder does).
        headers: request headers added to (or replacing those of) every recorded request, e.g.
            ``("Authorization", "Bearer sk-...")``; their values are never printed nor written.
        tolerance: how far timing may move (:class:`~ssemock.drift.compare.Tolerance`).
        timeout: seconds one interaction may take, request to last byte.
        max_response: bytes of one answer read at most (default 10 MiB, ``ssemock check``'s largest cassette
            file); a larger answer is not compared.
    """

    target: str
    headers: tuple[tuple[str, str], ...] = ()
    tolerance: Tolerance = field(default_factory=Tolerance)
    timeout: float = 300.0
    max_response: int = MAX_CHECK_SIZE


@dataclass
class Outcome:
    """What became of one recorded interaction.

    Attributes:
        cassette: the cassette file; index: the interaction's index in it; request: ``METHOD /path``.
        findings: the differences found (empty: none, or it could not be compared).
        error: why it could not be compared (not replayable, upstream failed, too large, too slow), or None.
        new: the new recording (scrubbed), or None.
        not_updated: with ``--update``, why this drifted recording was kept (:func:`~.update.kept_because`).
    """

    cassette: Path
    index: int
    request: str
    findings: list[Finding] = field(default_factory=list)
    error: str | None = None
    new: Interaction | None = None
    not_updated: str | None = None


async def replay_all(cassettes: Sequence[Cassette], options: DriftOptions) -> list[Outcome]:
    """Replay every interaction of ``cassettes`` (each loaded from its :attr:`~Cassette.path`) to
    ``options.target`` through a recorder, in order; one :class:`Outcome` each.

    Raises:
        RecorderConfigError: a bad target URL.
        RecorderError: the recorder cannot start.
    """
    names = frozenset(name.lower() for name, _ in options.headers)
    with tempfile.TemporaryDirectory(prefix="ssemock-drift-") as tmp:
        recorder = Recorder(
            options.target,
            tmp,
            mode="all",
            filter=Filter(request_headers=names),
            keep_encoding=True,
            read_timeout=min(options.timeout, 600.0),
        )
        timeout = aiohttp.ClientTimeout(total=None, sock_connect=30)
        outcomes: list[Outcome] = []
        async with (
            recorder,
            aiohttp.ClientSession(
                auto_decompress=False, timeout=timeout, cookie_jar=aiohttp.DummyCookieJar()
            ) as session,
        ):
            for cassette in cassettes:
                for index, interaction in enumerate(cassette.interactions):
                    outcome = Outcome(cassette.path or Path(cassette.name), index, describe(interaction.request))
                    outcome.error = _not_replayable(interaction)
                    if outcome.error is None:
                        await _ask(
                            session, recorder, Path(tmp), f"drift-{len(outcomes)}", interaction, outcome, options
                        )
                    outcomes.append(outcome)
    return outcomes


def _not_replayable(interaction: Interaction) -> str | None:
    request, response = interaction.request, interaction.response
    if request.body is None and request.body_sha256 is not None:
        return "its request body is stored by digest (sha256, size), not as bytes: it cannot be sent again"
    if response.body_not_recorded is not None:
        return f"the recording has no body to compare with ({response.body_not_recorded})"
    return None


def _request_headers(interaction: Interaction, options: DriftOptions, name: str) -> list[tuple[str, str]]:
    """The recorded request headers (but ``Host``, hop-by-hop ones and those replaced), the extra ones, and
    the cassette header naming where the recorder writes the answer."""
    replaced = {k.lower() for k, _ in options.headers}
    headers = [
        (k, v) for k, v in interaction.request.headers if k.lower() not in HOP_BY_HOP and k.lower() not in replaced
    ]
    if not any(k.lower() == "accept-encoding" for k, _ in headers):
        headers.append(("Accept-Encoding", "identity"))  # what the recorder asks for by default
    return [*headers, *options.headers, ("X-SSEMock-Cassette", name)]


async def _ask(
    session: aiohttp.ClientSession,
    recorder: Recorder,
    directory: Path,
    name: str,
    interaction: Interaction,
    outcome: Outcome,
    options: DriftOptions,
) -> None:
    """Send one recorded request through ``recorder``; fill ``outcome`` with the findings or the error."""
    request = interaction.request
    query = f"?{urlencode(request.query)}" if request.query else ""
    seen = len(recorder.interactions)
    try:
        async with asyncio.timeout(options.timeout):
            async with session.request(
                request.method,
                recorder.url + request.path + query,
                data=request.body or None,
                headers=_request_headers(interaction, options, name),
                allow_redirects=False,
                skip_auto_headers=("User-Agent", "Content-Type", "Accept", "Accept-Encoding"),
            ) as response:
                size, body = 0, []
                async for data in response.content.iter_any():
                    size += len(data)
                    if size > options.max_response:
                        outcome.error = f"the answer is over {options.max_response} bytes: not compared"
                        return
                    body.append(data)
    except TimeoutError:
        outcome.error = f"no complete answer within {options.timeout:g} s: not compared"
        return
    except aiohttp.ClientError as exc:
        outcome.error = f"the answer was cut ({type(exc).__name__}): not compared"
        return
    await recorder.flush()
    rows = recorder.interactions[seen:]
    if not rows or rows[-1]["action"] != "recorded":
        outcome.error = _failure(rows[-1] if rows else None, b"".join(body))
        return
    with contextlib.suppress(FileNotFoundError):
        outcome.new = load(directory / f"{name}.yaml").interactions[-1]
    if outcome.new is None:
        outcome.error = "the recorder wrote no recording"
        return
    found = compare(shape_of(interaction.response), shape_of(outcome.new.response), options.tolerance)
    outcome.findings = [
        replace(f, cassette=str(outcome.cassette), interaction=outcome.index, request=outcome.request) for f in found
    ]


def _failure(row: dict[str, object] | None, body: bytes) -> str:
    """Why the recorder did not record: its refusal's message (the target shown without user info)."""
    import json

    try:
        message = json.loads(body)["error"]["message"]
    except (ValueError, KeyError, TypeError):
        message = f"{row['action']} ({row.get('end') or row.get('status')})" if row else "no answer"
    return f"not recorded: {message}"
