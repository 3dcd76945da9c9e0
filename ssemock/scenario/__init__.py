"""Scenarios: named, composable steps applied to a recorded response on replay.

A scenario file (YAML)::

    ssemock_scenario: 1
    name: split-crlf
    description: CRLF line ends, each split between its CR and its LF
    preserves: events          # events | payloads | nothing (a fault)
    steps:
    - line-endings: {eol: crlf}
    - fragment: {mode: crlf}

Order of application (design §2): the steps run stage by stage, ``event`` →
``byte`` → ``chunk`` → ``transport``; within a stage by the step's phase (``timing`` before
``fragment``, ``drop-and-resume`` before the other transport steps), then in the order written.
So ``gzip-buffered,timed1`` and ``timed1,gzip-buffered`` send the same bytes at the same times.
A step that had no effect a client can see says so, and why, in the journal's ``notes``.
Composing scenarios (``X-SSEMock-Scenario: crlf,split-bytes``) concatenates
their steps before that sort, so ``crlf,split-bytes`` and ``split-bytes,crlf``
send the same bytes.

* event: ``json-separators``, ``multiline-data``, ``long-lines``,
  ``line-separators``, ``no-done``, ``error-mid-stream``
  (:mod:`.event_steps`), ``insert``, ``edit``, ``drop``, ``replace``
  (:mod:`.edit_steps`, predicates and JSON paths in :mod:`.predicates`), ``copy``
  (:mod:`.more_steps`), ``event-ids``
  (:mod:`.resume_steps`);
  only ``text/event-stream`` bodies;
* byte: ``line-endings``, ``bom``, ``keepalive``, ``extra-fields``,
  ``meta-blocks``, ``drop-final-blank-line`` (:mod:`.byte_steps`), ``field-spacing``,
  ``empty-data`` (:mod:`.field_steps`), ``end-after-comment`` (:mod:`.ending_steps`);
  only ``text/event-stream`` bodies;
* chunk: ``timing``, ``fragment`` (:mod:`.chunk_steps`);
* transport: ``http-error``, ``content-type``, ``first-byte``, ``stall``,
  ``disconnect``, ``framing``, ``content-encoding``, ``keep-alive-every``, ``heartbeat``
  (:mod:`.transport_steps`), ``ping-event`` (:mod:`.more_steps`),
  ``drop-and-resume`` (:mod:`.resume_steps`); the HTTP/2 layer's ``h2-frames``, ``h2-reset``, ``h2-goaway``,
  ``h2-starve`` (:mod:`.h2_steps`; HTTP/2 requests only); the TLS layer's ``tls-records``, ``tls-close``
  (:mod:`.tls_steps`; TLS requests only).

Randomness (``fragment: {mode: random}``, ``line-endings: {eol: mixed}``,
``timing: {mode: jitter}``) comes from the server's seed, the step's position
and its name: the same seed gives the same bytes and chunk boundaries. The seed
is in every journal entry.

Each step's docstring gives its fields and a YAML example; a wrong file, step,
field or value raises :class:`~ssemock.ScenarioError` naming the file, the step
(``steps[1].fragment.mode``) and the valid choices.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..plan import Plan
from . import (
    byte_steps,
    chunk_steps,
    edit_steps,
    ending_steps,
    event_steps,
    field_steps,
    h2_steps,
    more_steps,
    resume_steps,
    tls_steps,
    transport_steps,
)
from .base import STAGES, STEPS, Field, LineStep, Step
from .chunk_steps import Fragment, TimingStep
from .model import PRESERVES, Scenario, load_scenarios, step_registry

__all__ = [
    "PRESERVES",
    "STAGES",
    "STEPS",
    "Field",
    "Fragment",
    "LineStep",
    "Plan",
    "Scenario",
    "Step",
    "TimingStep",
    "byte_steps",
    "chunk_steps",
    "conformance_matrix",
    "edit_steps",
    "ending_steps",
    "event_steps",
    "field_steps",
    "h2_steps",
    "load_scenarios",
    "more_steps",
    "resume_steps",
    "step_registry",
    "tls_steps",
    "transport_steps",
]


def conformance_matrix(scenarios: Iterable[Scenario] | None = None, *, http2: bool = False,
                       tls: bool = False) -> list[str]:
    """The names of the scenarios a correct SSE client must get through unchanged.

    These are the semantics-preserving (``preserves: events``) and
    payload-preserving (``preserves: payloads``) scenarios, sorted by name; use
    them as a pytest parameter list::

        @pytest.mark.parametrize("scenario", ssemock.conformance_matrix())
        def test_client(scenario): ...

    Args:
        scenarios: the scenarios to choose from; default: the bundled presets.
        http2: also the scenarios with steps of the HTTP/2 layer (``h2-split-crlf``), for a client that
            reads over HTTP/2 (``MockServer(http2=True)``); default: those are left out.
        tls: also the scenarios with steps of the TLS layer (``tls-split-crlf``), for a client that reads over
            https (``MockServer(tls=True)``); default: those are left out.

    Returns:
        Scenario names, for ``X-SSEMock-Scenario`` or ``MockServer(scenario=...)``.

    Raises:
        ScenarioError: a bundled scenario file is malformed.
    """
    if scenarios is None:
        from ..bundled import bundled_scenarios

        scenarios = load_scenarios(bundled_scenarios()).values()
    return sorted(s.name for s in scenarios
                  if s.preserves in ("events", "payloads") and (http2 or not s.needs_http2)
                  and (tls or not s.needs_tls))
