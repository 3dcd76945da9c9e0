"""The one-line command that reproduces a case against ``ssemock serve``: the server in the background
with the case's cassette and scenario, then the client with ``SSEMOCK_URL`` (and the SDK variables of
the cassette's provider) pointing at it."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from pathlib import Path

import yaml

from ..bundled import bundled_scenarios
from ..cassette import Cassette
from ..providers import provider_for
from ..scenario import Scenario
from ..tls import TLSFiles, trust_env
from .cases import Case
from .reference import stream_interaction
from .run import case_url, stream_request

__all__ = ["BODY_FILE", "MAX_BODY", "PORT", "reproduce_command"]

PORT = 8765
"""The port the reproduce command serves on."""
BODY_FILE = "request.body"
"""The file the reproduce command writes the recorded request body to (``SSEMOCK_BODY_FILE``)."""
MAX_BODY = 65_536
"""Largest request body written into the reproduce command, in bytes (a larger one is left out)."""


def reproduce_command(
    case: Case, cassette: Cassette, command: Sequence[str], *, bundled: bool, timing_scale: float, seed: int,
    tls: TLSFiles | None = None, http2: bool = False, base: Sequence[Scenario] = (),
) -> str:
    """The shell line reproducing ``case`` (``bundled``: ``cassette`` is one of the bundled cassettes; ``tls``:
    the files of ssemock's local authority the cases were served over https with; ``http2``: HTTP/2 too;
    ``base``: the scenarios composed into every case)."""
    origin = f"{'https' if tls else 'http'}://127.0.0.1:{PORT}"
    url = case_url(origin, case, [s.name for s in base])
    serve = ["ssemock", "serve", "--port", str(PORT), "--timing-scale", f"{timing_scale:g}"]
    # the files themselves: ``--tls`` alone would take the authority of the environment the line is run in
    # (``XDG_CACHE_HOME``), which the client's SSL_CERT_FILE may not name
    serve += [*(["--tls", "--tls-cert", str(tls.cert), "--tls-key", str(tls.key)] if tls else []),
              *(["--http2"] if http2 else [])]
    if seed:
        serve += ["--seed", str(seed)]
    if not bundled and cassette.path is not None:
        serve += ["--cassettes", str(cassette.path)]
    prefix = ""
    presets = bundled_scenarios().resolve()
    for scenario in [*([case.scenario] if case.scenario is not None and not case.bundled else []), *base]:
        if scenario.source is not None and Path(scenario.source).resolve().parent == presets:
            continue  # a bundled preset: ssemock serve knows it by name
        if scenario.source is not None:
            serve += ["--scenarios", scenario.source]
        else:
            file = f"{scenario.name}.yaml"
            text = yaml.safe_dump(scenario.describe(), sort_keys=False, default_flow_style=None, width=1000)
            prefix += f"printf %s {shlex.quote(text)} > {file} && "
            serve += ["--scenarios", file]
    env = [f"SSEMOCK_URL={url}", *_sdk_variables(cassette, url), *_stream_variables(cassette, url),
           *(f"{name}={value}" for name, value in (trust_env(tls) if tls else {}).items())]
    index = stream_interaction(cassette)
    body = None if index is None else cassette.interactions[index].request.body
    if body is not None and len(body) <= MAX_BODY:
        prefix += f"printf %s {shlex.quote(body.decode('utf-8', 'replace'))} > {BODY_FILE} && "
        env.append(f"SSEMOCK_BODY_FILE={BODY_FILE}")
    return f"{prefix}{shlex.join(serve)} & sleep 1; {' '.join(shlex.quote(v) for v in env)} {shlex.join(command)}"


def _stream_variables(cassette: Cassette, url: str) -> list[str]:
    """``SSEMOCK_METHOD`` and ``SSEMOCK_STREAM_URL`` as the case set them (see :func:`.run.case_environment`)."""
    values = stream_request(cassette, url)
    return [f"{name}={value}" for name, value in values.items()]


def _sdk_variables(cassette: Cassette, url: str) -> list[str]:
    """``NAME=VALUE`` of the base URL and key variables of the provider the cassette's stream is from."""
    index = stream_interaction(cassette)
    request = cassette.interactions[index if index is not None else 0].request if cassette.interactions else None
    if request is None:
        return []
    provider = provider_for(request.path, (request.body or b"")[:4096].decode("utf-8", "replace"))
    return [f"{name}={value.format(url=url)}" for name, value in provider.env.items()]
