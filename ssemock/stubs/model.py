"""The stub model: a stub is a :class:`Match` and a :class:`Reply`, with :class:`Timing`.

Records (frozen dataclasses, shared by matching, synthesis, YAML files and the inline API):

* :class:`Match` — which requests a stub answers (all given conditions must hold);
* :class:`Reply` — what it answers: text, reasoning, tool calls, refusal, finish reason,
  usage, or a :class:`ProviderError`;
* :class:`Timing` — when: time to first token, tokens per second or a gap per chunk, jitter;
* :class:`Stub` — the three together, a name, and how many times it may answer.

Bounds (each refused with a :class:`~ssemock.errors.StubError` naming the field):
:data:`MAX_TEXT` characters of text, reasoning or refusal (1 MiB), :data:`MAX_TOOL_CALLS`
tool calls (64), :data:`MAX_REGEX` characters of a regex (1,000; RE2 syntax, matched in
linear time: no backreferences or look-around), times at most
:data:`MAX_SECONDS` (3,600 s), ``tokens_per_second`` from 0.1 to 1,000,000.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import re2  # type: ignore[import-untyped]

from ..errors import StubError, shown_field

if TYPE_CHECKING:
    from ..cassette import Response
    from .conversation import Conversation

__all__ = [
    "FINISH_REASONS",
    "MAX_REGEX",
    "MAX_SECONDS",
    "MAX_TEXT",
    "MAX_TOOL_CALLS",
    "PROVIDERS",
    "REASONING_FIELDS",
    "Hit",
    "Match",
    "ProviderError",
    "Reply",
    "Stub",
    "Timing",
    "ToolCall",
    "Usage",
    "count_stubs",
]

PROVIDERS = ("openai-chat", "openai-responses", "anthropic", "gemini", "openrouter")
"""Provider formats a stub answers in (chosen by the request path)."""
FINISH_REASONS = ("stop", "length", "tool_calls", "content_filter")
"""Finish reasons, in OpenAI's words; each provider's own word is sent (``end_turn``, ``MAX_TOKENS``…)."""
MAX_TEXT = 1024 * 1024
MAX_TOOL_CALLS = 64
MAX_REGEX = 1000
MAX_SECONDS = 3600.0

_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False  # the error is raised as a StubError instead


@dataclass(frozen=True)
class ToolCall:
    """One tool call: ``name`` and ``arguments`` (a JSON object); ``id`` None: generated."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    id: str | None = None

    @property
    def arguments_json(self) -> str:
        """The arguments as compact JSON, as providers stream them."""
        return json.dumps(self.arguments, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True)
class Usage:
    """Token counts reported; None: counted from the text by :mod:`ssemock.stubs.tokens`."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    reasoning_tokens: int | None = None


@dataclass(frozen=True)
class ProviderError:
    """An HTTP error answer: ``status`` (400-599) and ``body`` (JSON value or text);
    ``body`` None: the provider's own error shape carrying ``message``."""

    status: int
    body: Any = None
    message: str = "The server had an error while processing your request."


REASONING_FIELDS = ("reasoning_content", "reasoning")
"""The values of :attr:`Reply.reasoning_field`."""


@dataclass(frozen=True)
class Reply:
    """What a stub answers.

    Attributes:
        text: the answer text (None: no text block).
        reasoning: reasoning / thinking text, sent before the answer where the provider
            streams it (Anthropic ``thinking`` + signature, Responses ``reasoning``,
            Gemini ``thought`` parts, OpenRouter ``reasoning``); counted in usage elsewhere.
        tool_calls: tool calls, after the text.
        refusal: a refusal message (OpenAI ``refusal``; text elsewhere).
        finish_reason: one of :data:`FINISH_REASONS`; None: ``tool_calls`` when there are
            tool calls, else ``stop``.
        usage: token counts; unset ones are counted.
        error: answer with this HTTP error instead.
        model: the model name reported; None: the one asked for.
        reasoning_field: on ``/v1/chat/completions``, the delta field that streams ``reasoning``:
            ``reasoning_content`` (DeepSeek, Qwen) or ``reasoning`` (OpenRouter); None: not streamed
            (as OpenAI).
    """

    text: str | None = None
    reasoning: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    refusal: str | None = None
    finish_reason: str | None = None
    usage: Usage = field(default_factory=Usage)
    error: ProviderError | None = None
    model: str | None = None
    reasoning_field: str | None = None

    @property
    def finish(self) -> str:
        """The finish reason sent (OpenAI's word)."""
        return self.finish_reason or ("tool_calls" if self.tool_calls else "stop")


@dataclass(frozen=True)
class Timing:
    """When the reply's events are sent, in seconds from the request (multiplied by the
    server's ``timing_scale``).

    Attributes:
        first_token: seconds before the first content event (the status line is sent at 0).
        tokens_per_second: content rate; None: ``chunk_gap`` seconds between events.
        chunk_gap: seconds between two events when ``tokens_per_second`` is None.
        jitter: each gap is multiplied by a factor drawn from ``1 ± jitter`` (0 to 1),
            seeded by the server's seed, the stub and the request, so runs repeat.
    """

    first_token: float = 0.0
    tokens_per_second: float | None = None
    chunk_gap: float = 0.0
    jitter: float = 0.0

    def __post_init__(self) -> None:
        for key, (low, high) in TIMING_BOUNDS.items():
            value = getattr(self, key)
            if value is None and key == "tokens_per_second":
                continue
            # NaN fails both comparisons; bools are refused
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
                unit = "a number from" if key in ("tokens_per_second", "jitter") else "a number of seconds from"
                raise StubError("<inline>", f"timing.{key}", f"{unit} {low:g} to {high:g}", value)


TIMING_BOUNDS = {"first_token": (0.0, MAX_SECONDS), "tokens_per_second": (0.1, 1e6), "chunk_gap": (0.0, 60.0),
                 "jitter": (0.0, 1.0)}
"""The bounds of each :class:`Timing` field (NaN and infinities are refused)."""


@dataclass(frozen=True)
class Match:
    """Which requests a stub answers: every condition given must hold (None: any).

    Attributes:
        provider: one of :data:`PROVIDERS`.
        path: the request path, exactly (``/v1/chat/completions``).
        model: the model asked for, exactly.
        equals / contains / regex: the last user message equals, contains, or has a match
            of this regular expression (RE2 syntax, compiled once here and run in time linear in
            the message: a pattern RE2 cannot take, such as a backreference, is refused).
        tool_result: True: the conversation ends with a tool result; False: it does not.
        turn: the turn number: 1 + the number of assistant messages in the conversation.
        step: the number of assistant messages after the last user message (0 for the
            first request of a tool loop, 1 for the one carrying the first tool result…).
    """

    provider: str | None = None
    path: str | None = None
    model: str | None = None
    equals: str | None = None
    contains: str | None = None
    regex: str | None = None
    tool_result: bool | None = None
    turn: int | None = None
    step: int | None = None
    compiled: Any = field(default=None, init=False, repr=False, compare=False)
    """The compiled ``regex`` (an RE2 pattern), or None."""

    def __post_init__(self) -> None:
        if self.provider is not None and self.provider not in PROVIDERS:
            raise StubError("<inline>", "match.provider", f"one of {', '.join(PROVIDERS)}", self.provider)
        for key in ("path", "model", "equals", "contains"):
            value = getattr(self, key)
            if value is not None and (not isinstance(value, str) or len(value) > MAX_TEXT):
                raise StubError("<inline>", f"match.{key}", f"a string of at most {MAX_TEXT} characters", value)
        if self.tool_result is not None and not isinstance(self.tool_result, bool):
            raise StubError("<inline>", "match.tool_result", "true or false", self.tool_result)
        for key in ("turn", "step"):
            value = getattr(self, key)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < (key == "turn")):
                raise StubError("<inline>", f"match.{key}", f"an integer >= {int(key == 'turn')}", value)
        if self.regex is not None:
            if not isinstance(self.regex, str) or len(self.regex) > MAX_REGEX:
                raise StubError("<inline>", "match.regex", f"a string of at most {MAX_REGEX} characters", self.regex)
            try:
                compiled = re2.compile(self.regex, _RE2_OPTIONS)
            except re2.error as exc:
                reason = exc.args[0].decode("utf-8", "replace") if exc.args and isinstance(exc.args[0], bytes) \
                    else str(exc)
                reason = shown_field(reason, 80)  # RE2 quotes the pattern: bounded, secrets redacted
                raise StubError("<inline>", "match.regex", f"a regular expression RE2 accepts ({reason}; "
                                "no backreferences or look-around)", self.regex) from None
            object.__setattr__(self, "compiled", compiled)

    def searches(self, text: str) -> bool:
        """True when ``regex`` has a match in ``text`` (linear time); True without a regex."""
        if self.compiled is None:
            return True
        try:
            return self.compiled.search(text) is not None
        except UnicodeEncodeError:  # a lone surrogate (valid JSON): match its UTF-8-like bytes
            return self.compiled.search(text.encode("utf-8", "surrogatepass")) is not None

    def describe(self) -> str:
        """``contains='weather', tool_result=True`` (the conditions given), or ``any request``."""
        shown = [f"{k}={v!r}" for k, v in self.__dict__.items() if v is not None and k != "compiled"]
        return ", ".join(shown) or "any request"


@dataclass
class Stub:
    """A match, a reply and its timing.

    Attributes:
        name: shown in the journal (``stub``) and in the no-match report.
        times: how many requests it may answer (None: any number); ``used`` counts them.
        source: the file it came from, or ``<inline>``.
    """

    match: Match
    reply: Reply
    timing: Timing = field(default_factory=Timing)
    name: str = "stub"
    times: int | None = None
    source: str = "<inline>"
    used: int = 0

    @property
    def available(self) -> bool:
        """True while it may still answer."""
        return self.times is None or self.used < self.times


def count_stubs(stubs: list[Stub]) -> int:
    """How many stubs a user wrote: a chain of steps (a tool loop) counts once, not once per step."""
    return sum(1 for stub in stubs if not stub.match.step)


@dataclass
class Hit:
    """A stub's answer: the stub, the request read, and the synthesized response."""

    stub: Stub
    conversation: Conversation
    response: Response
