"""A browser ``EventSource`` on an https page reads every bundled event stream over TLS and HTTP/2.

Headless Chromium (Debian ``chromium``, driven by playwright-core: tests/node/eventsource-tls.mjs) loads a
page served over https from 127.0.0.1 (another port: a loopback origin, so CORS lets it read the replays),
whose ``EventSource`` objects read the streams of ``MockServer(http2=True, tls=...)``, then fetch the same
URLs' bytes. Chromium trusts the server by its key: the page server and the replay server present
ssemock's local server certificate (:func:`ssemock.tls.local_authority`, in a temporary directory), and
Chromium starts with ``--ignore-certificate-errors-spki-list`` set to the SHA-256 of that certificate's
SubjectPublicKeyInfo (Chromium's pinning of a key it is told to trust; the TLS handshake is real, playwright's
``ignoreHTTPSErrors`` is not used; without the flag the page load fails, ``ERR_CERT_AUTHORITY_INVALID``).

The events each ``MessageEvent`` carries (type, data, last event ID; WHATWG HTML "Server-sent events",
dispatch) must be those ssemock's reference decoder (:mod:`ssemock.sse`) reads from the HTTP/1.1 replay's
body, which is the recording's; the fetched bytes must be that body byte for byte. ``EventSource`` sends
``GET`` while the recordings answered ``POST``: the server matches on the path only (as in
tests/test_browser.py), and each interaction is served as a cassette of its own, so that each URL
(``/_ssemock/c/NAME/PATH``) has one answer and none is chosen by turn.

That each response came over h2 with TLS is read from the browser's network log (DevTools Protocol
``Network.responseReceived``: protocol, security state, TLS version, certificate names; and
``Network.getCertificate``: the certificate itself), and from the server's journal (``framing: h2``). Resource
Timing's ``nextHopProtocol`` is not used: the replays carry no ``Timing-Allow-Origin``, so to a page of another
origin it is empty.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import re
import subprocess
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from ssemock import Cassette, MockServer
from ssemock.mockserver import collect_cassettes
from ssemock.sse import Event, decode
from ssemock.tls import TLS_NAMES, TLSFiles, local_authority

from .rawclient import raw_request

SCRIPT = Path(__file__).parent / "node" / "eventsource-tls.mjs"
STREAMS = 22  # the bundled interactions that answer text/event-stream (of 27)


def spki_sha256(cert: Path) -> str:
    """The base64 SHA-256 of the first certificate's SubjectPublicKeyInfo (DER), as Chromium's flag takes it."""
    leaf = x509.load_pem_x509_certificate(cert.read_bytes())
    der = leaf.public_key().public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo)
    return base64.b64encode(hashlib.sha256(der).digest()).decode()


def event_streams() -> list[Cassette]:
    """Each bundled interaction whose answer is an event stream, as a cassette of its own (``NAME.INDEX``)."""
    return [
        replace(cassette, name=f"{name}.{index}", interactions=[inter], path=None)
        for name, cassette in sorted(collect_cassettes(None).items())
        for index, inter in enumerate(cassette.interactions)
        if "event-stream" in (inter.response.header("content-type") or "")
    ]


def target(cassette: Cassette) -> str:
    request = cassette.interactions[0].request
    query = "?" + urlencode(request.query) if request.query else ""
    return f"/_ssemock/c/{quote(cassette.name, safe='')}{request.path}{query}"


def listened_types(body: bytes) -> list[str]:
    """Every value an ``event`` line of ``body`` may give (a plain scan of lines, not the decoder), and
    ``message``: the types the page listens for, so that an event the decoder would miss still shows."""
    lines = re.split(rb"\r\n|\r|\n", body.removeprefix(b"\xef\xbb\xbf"))
    named = {m.group(1).decode("utf-8", "replace") for line in lines if (m := re.fullmatch(rb"event: ?(.*)", line))}
    return sorted(named | {"message"})


def http1_body(server: MockServer, cassette: Cassette) -> bytes:
    """The HTTP/1.1 replay's body of the browser's request (GET, ``Accept: text/event-stream``), decoded."""
    answer = raw_request(server.url, "GET", target(cassette), b"", {"Accept": "text/event-stream"})
    assert answer.status == 200, cassette.name
    return gzip.decompress(answer.body) if answer.header("content-encoding") == "gzip" else answer.body


def reference_events(body: bytes) -> list[dict[str, str]]:
    return [
        {"type": e.type, "data": e.data, "lastEventId": e.last_event_id} for e in decode(body) if isinstance(e, Event)
    ]


def run_chromium(node: str, files: TLSFiles, urls: list[str], bodies: list[bytes], work: Path) -> dict[str, Any]:
    given = {
        "cert": files.cert.read_text(),
        "key": files.key.read_text(),
        "spki": spki_sha256(files.cert),
        "streams": [{"url": url, "types": listened_types(body)} for url, body in zip(urls, bodies, strict=True)],
    }
    (work / "streams.json").write_text(json.dumps(given))
    done = subprocess.run([node, str(SCRIPT), str(work / "streams.json")], capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def test_chromium_eventsource_on_an_https_page_reads_every_recording_over_tls_and_h2(
    node: str, chromium: Path, tmp_path: Path
) -> None:
    cassettes = event_streams()
    assert len(cassettes) == STREAMS
    files = local_authority(tmp_path / "tls")
    options = {"scenarios": [], "timing_scale": 0, "match_on": ("path",)}
    with MockServer(cassettes, **options) as plain:  # type: ignore[arg-type]
        bodies = [http1_body(plain, c) for c in cassettes]
    for cassette, body in zip(cassettes, bodies, strict=True):  # the HTTP/1.1 replay is the recording
        recorded = cassette.interactions[0].response
        assert body == (gzip.decompress(recorded.body) if recorded.header("content-encoding") else recorded.body)
    with MockServer(cassettes, http2=True, tls=files, **options) as server:  # type: ignore[arg-type]
        urls = [server.url + target(c) for c in cassettes]
        assert server.url.startswith("https://127.0.0.1:")
        result = run_chromium(node, files, urls, bodies, tmp_path)
        journal = server.requests
    assert result["origin"].startswith("https://127.0.0.1:")
    for cassette, body, seen in zip(cassettes, bodies, result["streams"], strict=True):
        expected = reference_events(body)
        assert expected, cassette.name
        assert seen["opened"] and seen["state"] == 0, cassette.name  # read to its end, not failed
        assert seen["events"] == expected, cassette.name
        assert seen["status"] == 200 and base64.b64decode(seen["bytes"]) == body, cassette.name
    check_transport(result, urls, journal, files.cert)


def check_transport(result: dict[str, Any], urls: list[str], journal: list[dict[str, Any]], cert: Path) -> None:
    """Each URL was read twice (EventSource, then fetch) over h2, with TLS, from ssemock's certificate."""
    # The browser's network log (DevTools Protocol): Resource Timing's nextHopProtocol is withheld from a
    # page of another origin when the answer has no Timing-Allow-Origin.
    answers = [r for r in result["responses"] if r["url"] in urls]
    assert sorted(r["url"] for r in answers) == sorted(urls * 2)
    assert {(r["status"], r["protocol"], r["securityState"], tuple(r["names"])) for r in answers} == {
        (200, "h2", "secure", TLS_NAMES)
    }, answers
    assert {r["tls"] for r in answers} <= {"TLS 1.2", "TLS 1.3"}
    leaf = x509.load_pem_x509_certificate(cert.read_bytes()).public_bytes(Encoding.DER)
    assert base64.b64decode(result["certificate"][0]) == leaf
    # What the server saw.
    assert len(journal) == 2 * len(urls) and {(e["method"], e["framing"], e["outcome"]) for e in journal} == {
        ("GET", "h2", "complete")
    }
