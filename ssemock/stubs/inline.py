"""The inline form of stubs: ``reply(text)`` and ``on(...).call_tool(...).then_reply(...)``.

``on(**conditions)`` starts a :class:`Chain`: each ``call_tool`` / ``reply`` /
``then_reply`` / ``error`` adds one step, answered in turn. With more than one step, step
``k`` answers the request with ``k`` assistant messages after the last user message (so
the request carrying the first tool result gets step 1); a single step answers every
request the conditions select.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..errors import StubError
from .checks import check_finish, check_json, check_status, check_text, check_times, parse_usage
from .model import MAX_TOOL_CALLS, REASONING_FIELDS, Match, ProviderError, Reply, Stub, Timing, ToolCall, Usage

__all__ = ["Chain", "on", "reply"]

_ANY, _AT_ONCE, _COUNTED = Match(), Timing(), Usage()  # frozen: one of each serves every stub


def _check_text(field: str, value: Any) -> None:
    check_text(value, "<inline>", field)


def make_reply(
    text: str | None = None, *, reasoning: str | None = None, tool_calls: Sequence[ToolCall] = (),
    refusal: str | None = None, finish_reason: str | None = None, usage: Usage | Mapping[str, int] | None = None,
    model: str | None = None, reasoning_field: str | None = None,
) -> Reply:
    """A checked :class:`Reply` (raises :class:`~ssemock.errors.StubError` naming the field)."""
    for name, value in (("text", text), ("reasoning", reasoning), ("refusal", refusal), ("model", model)):
        _check_text(name, value)
    if not isinstance(tool_calls, (list, tuple)) or not all(isinstance(c, ToolCall) for c in tool_calls):
        raise StubError("<inline>", "tool_calls", "a list of tool calls (ssemock.stubs.tool_call(name, arguments))",
                        tool_calls)
    if len(tool_calls) > MAX_TOOL_CALLS:
        raise StubError("<inline>", "tool_calls", f"at most {MAX_TOOL_CALLS} tool calls", len(tool_calls))
    if usage is not None and not isinstance(usage, (Usage, Mapping)):
        raise StubError("<inline>", "usage", "a mapping of input_tokens, output_tokens, reasoning_tokens", usage)
    parsed = usage if isinstance(usage, Usage) else parse_usage(usage, "<inline>", "usage") if usage else _COUNTED
    check_finish(finish_reason, "<inline>", "finish_reason")
    if reasoning_field not in (None, *REASONING_FIELDS):
        raise StubError("<inline>", "reasoning_field", "reasoning_content | reasoning | None", reasoning_field)
    return Reply(text=text, reasoning=reasoning, tool_calls=tuple(tool_calls), refusal=refusal,
                 finish_reason=finish_reason, usage=parsed, model=model, reasoning_field=reasoning_field)


def tool_call(name: str, arguments: Mapping[str, Any] | None = None, *, id: str | None = None) -> ToolCall:  # noqa: A002
    """A checked :class:`ToolCall`: a non-empty ``name``, a JSON object ``arguments`` (see
    :func:`check_json`). Raises :class:`~ssemock.errors.StubError`."""
    if not isinstance(name, str) or not name:
        raise StubError("<inline>", "tool_calls.name", "a non-empty string", name)
    check_text(name, "<inline>", "tool_calls.name")
    if arguments is not None and not isinstance(arguments, Mapping):
        raise StubError("<inline>", f"tool_calls[{name}].arguments", "a JSON object", arguments)
    _check_text(f"tool_calls[{name}].id", id)
    args = dict(arguments or {})
    check_json(args, "<inline>", f"tool_calls[{name}].arguments")
    return ToolCall(name, args, id)


def reply(text: str, *, times: int | None = 1, timing: Timing | None = None, **fields: Any) -> Stub:
    """A stub answering the next chat request (any provider, any prompt) with ``text``.

    Args:
        text: the answer.
        times: how many requests it answers (default 1; None: every one).
        timing: when the events are sent (default: at once).
        **fields: more of the reply (``reasoning``, ``tool_calls``, ``refusal``,
            ``finish_reason``, ``usage``, ``model``), as :func:`make_reply` takes them.
    """
    check_times(times, "<inline>", "times")
    _check_timing(timing)
    made = make_reply(text, **fields)
    return Stub(_ANY, made, timing or _AT_ONCE, name=f"reply({(text or '')[:30]!r})", times=times)


def _check_timing(timing: Any) -> None:
    if timing is not None and not isinstance(timing, Timing):
        raise StubError("<inline>", "timing", "a Timing(first_token=…, tokens_per_second=…, …)", timing)


class Chain:
    """Steps answered in turn for the requests a :class:`Match` selects (see the module docstring).

    Iterating gives the stubs; ``on_add`` (when given) is told of each stub as it is made.
    """

    def __init__(self, match: Match, timing: Timing | None = None,
                 on_add: Callable[[Stub], None] | None = None) -> None:
        self.match = match
        self.timing = timing or _AT_ONCE
        self._stubs: list[Stub] = []
        self._on_add = on_add

    def __iter__(self) -> Iterator[Stub]:
        return iter(self._stubs)

    def add_step(self, answer: Reply, label: str) -> Chain:
        """Append a step answering ``answer`` (``label`` names it in the stub's name); returns self."""
        index = len(self._stubs)
        if index == 1:  # now a sequence: the first step answers the first request only
            first = self._stubs[0]
            first.match = replace(first.match, step=0)
        match = replace(self.match, step=index, tool_result=True) if index else self.match
        stub = Stub(match, answer, self.timing, name=f"on({self.match.describe()}) step {index + 1}: {label}")
        self._stubs.append(stub)
        if self._on_add is not None:
            self._on_add(stub)
        return self

    def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None, *, text: str | None = None) -> Chain:
        """Next step: call tool ``name`` with ``arguments`` (after ``text``, if given)."""
        return self.add_step(make_reply(text, tool_calls=[tool_call(name, arguments)]), f"call {name}")

    def call_tools(self, calls: Sequence[tuple[str, Mapping[str, Any]]]) -> Chain:
        """Next step: several tool calls in one answer (parallel calls)."""
        made = [tool_call(name, args) for name, args in calls]
        return self.add_step(make_reply(tool_calls=made), "call " + ", ".join(c.name for c in made))

    def reply(self, text: str, **fields: Any) -> Chain:
        """Next step: answer ``text`` (``fields`` as :func:`make_reply` takes them)."""
        return self.add_step(make_reply(text, **fields), f"reply {text[:30]!r}")

    then_reply = reply

    def error(self, status: int, body: Any = None, message: str | None = None) -> Chain:
        """Next step: answer HTTP ``status`` (400-599) with ``body`` (None: the provider's error shape)."""
        check_status(status, "<inline>", "error.status")
        check_json(body, "<inline>", "error.body")
        _check_text("error.message", message)
        fault = ProviderError(status, body) if message is None else ProviderError(status, body, message)
        return self.add_step(Reply(error=fault), f"error {status}")


def on(
    *, contains: str | None = None, equals: str | None = None, regex: str | None = None,
    model: str | None = None, provider: str | None = None, path: str | None = None,
    tool_result: bool | None = None, turn: int | None = None, timing: Timing | None = None,
    on_add: Callable[[Stub], None] | None = None,
) -> Chain:
    """A :class:`Chain` for the requests matching every condition given (see :class:`Match`).

    Raises:
        StubError: a condition or ``timing`` of the wrong type or out of bounds, naming it.
    """
    _check_timing(timing)
    match = Match(provider=provider, path=path, model=model, equals=equals, contains=contains, regex=regex,
                  tool_result=tool_result, turn=turn)
    return Chain(match, timing, on_add)
