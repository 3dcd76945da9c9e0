"""Stubs: match + synthesis of a 2,000-token answer, and the fixture's cost with an inline stub.

1. ``StubBook.answer`` on a book of 50 stubs whose last one answers (49 refused first, each on its
   ``contains`` condition), synthesizing a 2,000-token answer (the documented token-like rule) in
   the provider's format: OpenAI chat, OpenAI Responses, Anthropic, Gemini. Baseline, interleaved
   in the same run: ``json.dumps`` of 2,000 minimal ``{"delta": TOKEN}`` objects joined as SSE
   lines, the floor of any synthesizer writing one event per token. Goal: at most 5 ms (median).
2. The ``ssemock`` fixture in a test that adds an inline stub (``ssemock.reply("Hello")``) and has
   no cassette, set-up + call + tear-down, against an empty test (interleaved, one pytest
   session in a subprocess, as :mod:`benchmarks.fixture_overhead` measures). Goal: at most 2 ms more.

``python -m benchmarks.stub_synthesis [--quick]`` prints the figures.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from ssemock.cassette import Request
from ssemock.providers.tokens import split_tokens
from ssemock.stubs import StubBook, on, reply

from . import figure
from .fixture_overhead import CONFTEST

__all__ = ["run"]

GOAL_MS = 5.0
FIXTURE_GOAL_MS = 2.0
WORDS = ["the", "quick", "brown", "fox", "jumps", "over", "a", "lazy", "dog", "while", "seven", "zebras",
         "quietly", "graze", "near", "1,234", "trees"]
PATHS = {
    "openai-chat": ("/v1/chat/completions", {"messages": [{"role": "user", "content": "tell me a story"}],
                                             "stream": True, "stream_options": {"include_usage": True}}),
    "openai-responses": ("/v1/responses", {"input": "tell me a story", "stream": True}),
    "anthropic": ("/v1/messages", {"messages": [{"role": "user", "content": "tell me a story"}], "stream": True}),
    "gemini": ("/v1beta/models/gemini-2.0-flash:streamGenerateContent",
               {"contents": [{"role": "user", "parts": [{"text": "tell me a story"}]}]}),
}


def answer_text(tokens: int = 2000) -> str:
    """A text of exactly ``tokens`` token-like pieces."""
    text = " ".join(WORDS[i % len(WORDS)] for i in range(tokens))
    pieces = split_tokens(text)
    while len(pieces) > tokens:
        text = text.rsplit(" ", 1)[0]
        pieces = split_tokens(text)
    return text


def _baseline(pieces: list[str]) -> bytes:
    return b"".join(f"data: {json.dumps({'delta': p})}\n\n".encode() for p in pieces)


def synthesis_figures(rounds: int) -> list[dict[str, Any]]:
    text = answer_text()
    pieces = split_tokens(text)
    book = StubBook([*(s for i in range(49) for s in on(contains=f"topic-{i}").reply("no")), reply(text, times=None)])
    out = []
    for provider, (path, body) in PATHS.items():
        query = [("alt", "sse")] if provider == "gemini" else []
        request = Request("POST", path, query, [], json.dumps({"model": "m", **body}).encode())
        ours, base = [], []
        for _ in range(rounds):
            start = time.perf_counter()
            hit = book.answer(request)
            ours.append(time.perf_counter() - start)
            start = time.perf_counter()
            _baseline(pieces)
            base.append(time.perf_counter() - start)
            assert hit is not None and hit.stub.reply.text == text
        value, baseline = 1000 * statistics.median(ours), 1000 * statistics.median(base)
        out.append(figure(f"stub match (50 stubs) + synthesis of a 2,000-token answer, {provider}", value, "ms",
                          baseline=baseline, goal=f"<= {GOAL_MS:g} ms", met=value <= GOAL_MS))
    return out


TESTS = """
import pytest

@pytest.mark.parametrize("n", range({count}))
def test_fixture(ssemock, n):
    ssemock.reply("Hello")

@pytest.mark.parametrize("n", range({count}))
def test_empty(n):
    pass
"""


def fixture_figure(count: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="ssemock-stub-bench-") as tmp:
        root = Path(tmp)
        out = root / "durations.json"
        (root / "test_overhead.py").write_text(TESTS.format(count=count))
        (root / "conftest.py").write_text(CONFTEST.format(out=str(out)))
        (root / "pytest.ini").write_text("[pytest]\n")
        subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:hypothesispytest",
             "-p", "no:benchmark", "-p", "no:xdist", "-p", "no:randomly", str(root)],
            cwd=root, check=True, capture_output=True,
        )
        durations: dict[str, float] = json.loads(out.read_text())
    fixture = [1000 * d for node, d in durations.items() if "::test_fixture[" in node][1:]
    empty = [1000 * d for node, d in durations.items() if "::test_empty[" in node][1:]
    value, baseline = statistics.median(fixture), statistics.median(empty)
    return figure(f"pytest fixture with an inline stub: overhead per test over an empty test "
                  f"(median of {len(fixture)})", value - baseline, "ms", baseline=None,
                  goal=f"<= {FIXTURE_GOAL_MS:g} ms", met=value - baseline <= FIXTURE_GOAL_MS)


def run(quick: bool = False) -> list[dict[str, Any]]:
    """The figures (see the module docstring)."""
    return [*synthesis_figures(21 if quick else 101), fixture_figure(201 if quick else 501)]


if __name__ == "__main__":
    for item in run(quick="--quick" in sys.argv[1:]):
        print(json.dumps(item))
