"""Grading one case's run: a :class:`Grade` (pass, fail or not graded) with the reason, by the case's
rule (:mod:`ssemock.checkclient.cases`), from the client's output (:mod:`.contract`), its exit status,
its time and the replay server's journal."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from ..refusals import NeedsHTTP2Error, NeedsTLSError
from .cases import Rule, category
from .compare import first_difference, value_difference
from .contract import Output, PrintedEvent, read_output
from .run import ClientRun

__all__ = ["FAIL", "NOT_GRADED", "PASS", "Expected", "Grade", "grade"]

PASS, FAIL, NOT_GRADED = "pass", "fail", "n/a"
_MARGIN = 0.05  # seconds of timer slack granted against a Retry-After


@dataclass(frozen=True)
class Expected:
    """What a case is graded against.

    Attributes:
        events: what the reference decoder dispatches from the bytes sent (None: no event stream is sent).
        baseline: the client's own output on the clean recording (None for the clean case itself).
        retry_after: the ``Retry-After`` seconds the answer sends, or None.
        client_timeout: the client's own read timeout (``--client-timeout``), or None.
        stall: seconds the case's stall lasts (0: none).
        max_retries: requests sent again at most after an HTTP error.
        clean_status: the exit status of the clean run (not 0: the other cases are not graded).
        close_delimited: the body is sent close-delimited (``framing: close``, e.g. under ``--base``): its end is
            the connection's (RFC 9112 section 6.3), so an early end is no error of the HTTP layer.
    """

    events: tuple[PrintedEvent, ...] | None
    baseline: Output | None
    retry_after: float | None = None
    client_timeout: float | None = None
    stall: float = 0.0
    max_retries: int = 5
    clean_status: int | None = 0
    close_delimited: bool = False


@dataclass(frozen=True)
class Grade:
    """A case's grade: ``verdict`` (``pass``, ``fail``, ``n/a``), ``category`` (``conformance`` or
    ``resilience``) and ``reason`` (one line)."""

    case: str
    category: str
    verdict: str
    reason: str
    mode: str = "events"
    status: int | None = None
    seconds: float = 0.0


def grade(run: ClientRun, expected: Expected) -> Grade:
    """The grade of ``run`` against ``expected``."""
    output = read_output(run.stdout)
    verdict, reason = _verdict(run, output, expected)
    return Grade(run.case.name, category(run.case.rule), verdict, reason, output.mode, run.status, run.seconds)


def _verdict(run: ClientRun, output: Output, expected: Expected) -> tuple[str, str]:
    rule = run.case.rule
    if run.overflow:
        return FAIL, "printed more than the output bound (--max-output)"
    if run.timed_out and rule is not Rule.STALL:
        return FAIL, f"still running after {run.seconds:.1f} s: killed (the case timeout, --timeout)"
    if rule is not Rule.CLEAN and expected.clean_status != 0:
        return NOT_GRADED, "the client fails on the recording as recorded (the clean case): nothing to grade against"
    refused = [e for e in run.journal if e.get("error")]
    if refused and rule is Rule.CLEAN:
        return FAIL, f"the replay server refused the request: {refused[0]['error'].get('message', '')[:300]}"
    if layer := next((e["error"] for e in refused if e["error"].get("type") in _LAYERS), None):
        # the fault was never sent: the client's failure is the refusal's, not a report of the fault
        return FAIL, f"{_LAYERS[layer['type']]} (the server refused the request: {layer['type']})"
    if output.mode == "invalid":
        return FAIL, f"stdout is not the output contract: {output.problem}"
    if (resent := _blind_resend(run.journal)) is not None and rule is not Rule.RESUME:
        return FAIL, resent
    if category(rule) == "resilience" and (idle := _no_effect(run)) is not None:
        return NOT_GRADED, idle
    return _RULES[rule](run, output, expected)


_LAYERS = {NeedsHTTP2Error.code: "the client did not speak HTTP/2, which the case's steps act on",
           NeedsTLSError.code: "the client did not come over TLS, which the case's steps act on"}
"""The refusals of a request that did not come by the layer a case's steps act on, by error type."""


def _no_effect(run: ClientRun) -> str | None:
    """Why the case's scenario changed nothing of what was sent (each of its steps named in the journal's
    ``notes`` as having no effect: ``no-done`` on a stream without ``[DONE]``), or None. A fault that did
    nothing has nothing the client must report (a preset that keeps the events and did nothing passes as
    the clean case does)."""
    scenario = run.case.scenario
    if scenario is None or not scenario.steps or not run.journal:
        return None
    notes = [note for entry in run.journal for note in entry.get("notes", [])]
    if all(any(note.startswith(f"{step.name}: ") for note in notes) for step in scenario.steps):
        return f"the scenario changes nothing in this recording ({'; '.join(dict.fromkeys(notes))})"
    return None


def _clean(run: ClientRun, output: Output, expected: Expected) -> tuple[str, str]:
    if run.status != 0:
        return FAIL, f"exit status {run.status} on the recording as recorded{_stderr(run)}"
    return _same(run, output, expected, as_json=False)


def _same(run: ClientRun, output: Output, expected: Expected, *, as_json: bool) -> tuple[str, str]:
    """The output must be the reference's (events) or the clean run's (an answer); exit 0."""
    if run.status != 0:
        return FAIL, f"exit status {run.status} where the events are the recording's{_stderr(run)}"
    baseline = expected.baseline
    if baseline is not None and baseline.mode != output.mode:
        return FAIL, f"printed {output.mode} where the clean run printed {baseline.mode}"
    if output.mode == "events":
        if expected.events is None:
            return NOT_GRADED, "no event stream is sent: nothing to compare"
        found = first_difference(output.events, expected.events, as_json=as_json)
        if found is not None:
            return FAIL, found
        return PASS, f"{len(output.events)} event(s) as the reference decoder dispatches them"
    if baseline is None:
        return PASS, "an answer (the baseline of the other cases)"
    found = value_difference(output.answer, baseline.answer)
    return (FAIL, f"answer differs from the clean run's: {found}") if found else (PASS, "the clean run's answer")


def _events(run: ClientRun, output: Output, expected: Expected) -> tuple[str, str]:
    return _same(run, output, expected, as_json=False)


def _payloads(run: ClientRun, output: Output, expected: Expected) -> tuple[str, str]:
    return _same(run, output, expected, as_json=True)


def _decoded(run: ClientRun, output: Output, expected: Expected) -> tuple[str, str]:
    name = run.case.scenario.name if run.case.scenario else ""
    if output.mode == "answer" and name != "azure-first-chunk":
        return NOT_GRADED, "changes what the answer holds: graded for readers that print events"
    return _same(run, output, expected, as_json=False)


def _transport(run: ClientRun, output: Output, expected: Expected) -> tuple[str, str]:
    requests = len(run.journal)
    if requests > 1 + expected.max_retries:
        return FAIL, f"sent {requests} requests: more than 1 + {expected.max_retries} retries (--max-retries)"
    if expected.retry_after is not None and (early := _early_retry(run.journal, expected.retry_after)):
        return FAIL, early
    if run.status == 0:
        shown = f"{len(output.events)} event(s)" if output.mode == "events" else "an answer"
        if expected.close_delimited and run.journal and run.journal[0].get("status") == 200:
            return NOT_GRADED, (f"exit status 0, printed {shown}: the body is close-delimited, so its early end is "
                                "the connection's end to the HTTP layer (RFC 9112 section 6.3)")
        return FAIL, f"exit status 0: accepted the broken answer, printed {shown}"
    return PASS, f"reported (exit status {run.status}){_retries(run)}"


def _content_type(run: ClientRun, output: Output, expected: Expected) -> tuple[str, str]:
    if run.status == 0 and output.mode == "answer":
        return NOT_GRADED, "read the stream served as text/plain: an SDK may, a reader may not"
    return _transport(run, output, expected)


def _retries(run: ClientRun) -> str:
    requests = len(run.journal)
    return f" after {requests - 1} retr{'y' if requests == 2 else 'ies'}" if requests > 1 else ""


def _application(run: ClientRun, output: Output, expected: Expected) -> tuple[str, str]:
    if run.status != 0:
        return PASS, f"reported the incomplete answer (exit status {run.status})"
    if output.mode == "events":
        return (
            NOT_GRADED,
            "the stream ends cleanly: an SSE-level reader accepts it by design (not the reader's to judge)",
        )
    return FAIL, "exit status 0: accepted an incomplete answer as complete"


def _stall(run: ClientRun, output: Output, expected: Expected) -> tuple[str, str]:
    if expected.client_timeout is None:
        return NOT_GRADED, "give the client's read timeout with --client-timeout to grade stalls"
    if run.timed_out:
        return (
            FAIL,
            f"still running after {run.seconds:.1f} s: hung in a stall (client timeout {expected.client_timeout:g} s)",
        )
    if run.status == 0:
        return (
            FAIL,
            f"waited through the {expected.stall:g} s stall (client timeout {expected.client_timeout:g} s) "
            "and exited 0",
        )
    waited = run.since_request if run.since_request is not None else run.seconds
    if waited >= expected.stall:
        return (
            FAIL,
            f"reported the wait only {waited:.1f} s after its last request, when the {expected.stall:g} s wait "
            "had ended",
        )
    return (
        PASS,
        f"gave up {waited:.1f} s after its last request{_retries(run)} (client timeout "
        f"{expected.client_timeout:g} s, wait {expected.stall:g} s)",
    )


def _first_byte(run: ClientRun, output: Output, expected: Expected) -> tuple[str, str]:
    if expected.client_timeout is not None:
        return _stall(run, output, expected)
    if run.status not in (0, None):
        return (
            NOT_GRADED,
            f"reported the {expected.stall:g} s wait for the headers{_stderr(run)}: give --client-timeout to grade it",
        )
    return _same(run, output, expected, as_json=False)


def _resume(run: ClientRun, output: Output, expected: Expected) -> tuple[str, str]:
    if len(run.journal) < 2:
        return _application(run, output, expected)
    again = run.journal[1]
    if "last-event-id" not in {k.lower() for k in again.get("headers", {})}:
        return FAIL, "reconnected without Last-Event-ID after the stream ended early"
    if run.status != 0:
        return FAIL, f"resumed with Last-Event-ID, then exit status {run.status}{_stderr(run)}"
    if output.mode == "events" and expected.baseline is not None:
        seen = [PrintedEvent(e.type, e.data) for e in output.events]
        clean = [PrintedEvent(e.type, e.data) for e in expected.baseline.events]
        if (found := first_difference(seen, clean, ids=False)) is not None:
            return FAIL, f"resumed with Last-Event-ID, but {found}"
    return PASS, f"resumed with Last-Event-ID {again['headers'].get('Last-Event-ID', '')!r}"


def _unknown(run: ClientRun, output: Output, expected: Expected) -> tuple[str, str]:
    return NOT_GRADED, "no rule for this scenario (it preserves nothing and is not a bundled preset)"


_RULES = {
    Rule.CLEAN: _clean,
    Rule.EVENTS: _events,
    Rule.PAYLOADS: _payloads,
    Rule.DECODED: _decoded,
    Rule.TRANSPORT: _transport,
    Rule.APPLICATION: _application,
    Rule.STALL: _stall,
    Rule.FIRST_BYTE: _first_byte,
    Rule.RESUME: _resume,
    Rule.UNKNOWN: _unknown,
    Rule.CONTENT_TYPE: _content_type,
}


def _blind_resend(journal: Sequence[dict[str, Any]]) -> str | None:
    """Why a POST sent again after an earlier one got content (a 200 with body bytes) is a blind retry."""
    for earlier, later in pairwise(journal):
        delivered = earlier.get("status") == 200 and (earlier.get("bytes_sent") or 0) > 0
        if delivered and later.get("method") == "POST":
            return (
                f"sent the POST again after {earlier['bytes_sent']} bytes of a 200 answer had arrived (a blind "
                "retry of a generation)"
            )
    return None


def _early_retry(journal: Sequence[dict[str, Any]], wait: float) -> str | None:
    for number, (earlier, later) in enumerate(pairwise(journal), 2):
        gap = later["time"] - earlier["time"]
        if gap < wait - _MARGIN:
            return f"request {number} came {gap:.2f} s after the previous one, before Retry-After: {wait:g}"
    return None


def _stderr(run: ClientRun) -> str:
    lines = [line for line in run.stderr.strip().splitlines() if line.strip()]
    return f" ({lines[-1].strip()[:200]})" if lines else ""
