"""What ``ssemock --help`` and each sub-command's ``--help`` say: a help line, a paragraph, examples.

Every example is a command line the parser takes (the tests parse each one).
"""

from __future__ import annotations

import argparse
import textwrap
from dataclasses import dataclass

__all__ = ["COMMANDS", "DESCRIPTION", "EXAMPLES", "JOBS", "Command", "HelpFormatter", "epilog"]


@dataclass(frozen=True)
class Command:
    """One sub-command's texts: the line ``ssemock --help`` lists, its ``--help`` paragraph and examples."""

    help: str
    description: str
    examples: tuple[str, ...]


COMMANDS: dict[str, Command] = {
    "serve": Command(
        "serve cassettes over HTTP (replay)",
        "Serve recorded streams as a fake provider on 127.0.0.1: point a client's base URL at it and it answers "
        "each request with the recorded interaction that matches, with the recorded timing, or broken on purpose "
        "by scenarios (X-SSEMock-Scenario: NAME, /_ssemock/s/NAME/, --scenario). The journal of requests is at "
        "GET /_ssemock/requests.",
        ("ssemock serve", "ssemock serve --cassettes cassettes --scenario split-utf8 --timing-scale 0",
         "ssemock serve --port 0 --match-on method,path")),
    "import": Command(
        "convert foreign recordings into ssemock cassettes",
        "Convert recordings made by other tools (VCR.py and pytest-recording cassettes, HAR files from browsers "
        "and proxies, raw SSE bodies, JSON payloads one per line) into ssemock cassettes, with secrets removed.",
        ("ssemock import vcr tests/cassettes/test_chat.yaml -o cassettes",
         "ssemock import har session.har -o cassettes")),
    "inspect": Command(
        "show a cassette's interactions, chunks, timing and events",
        "Show what a cassette (or a stub file) holds: each interaction's request and status, its chunks and "
        "their timing, how the body ended, and the events and comments of an event stream; --plot draws one "
        "stream over time.",
        ("ssemock inspect openai-chat-tool-calls-usage", "ssemock inspect cassettes/chat.yaml --chunks")),
    "diff": Command(
        "compare two cassettes event by event and in time; exit 0 equal, 1 different",
        "Compare two cassettes (e.g. a recording and its re-recording) interaction by interaction: the events "
        "added, removed or changed, and the times that moved by more than the tolerance. Exit 0 when equal, 1 "
        "when they differ.",
        ("ssemock diff cassettes/chat.yaml new/chat.yaml --ignore id --ignore created",)),
    "scenarios": Command(
        "list the bundled scenarios, one line each; 'check FILE…' validates files",
        "List the bundled scenarios (the ways a stream is broken on purpose: split-utf8, crlf, http-429, ...), "
        "one line each; 'scenarios check FILE…' validates scenario files and names the step and field of each "
        "error.",
        ("ssemock scenarios", "ssemock scenarios check scenarios/my-stall.yaml")),
    "check": Command(
        "lint cassettes: format, size, secrets, age (exit 1 on findings)",
        "Lint cassette files before they are committed: that they load, their size, any secret the recorder's "
        "scanner finds (named by rule, never shown), bodies not recorded, and with --max-age their age. Exit 1 "
        "on findings: run it in CI or a pre-commit hook.",
        ("ssemock check cassettes", "ssemock check cassettes --max-age 90")),
    "record": Command(
        "record a provider through a streaming reverse proxy",
        "Record a real provider: a reverse proxy on 127.0.0.1 forwards each request to --target and streams the "
        "answer back read by read, writing the raw bytes and their timing into a cassette, with API keys, tokens "
        "and cookies removed. Point the client's base URL at it.",
        ("ssemock record --target https://api.openai.com --cassettes cassettes",
         "ssemock record --target https://api.anthropic.com --cassettes cassettes --record-mode new_episodes")),
    "drift": Command(
        "ask the provider again and compare with the recordings: breaking / changed / cosmetic",
        "Send each recorded request again to the provider through the recorder and compare the new answer with "
        "the recording by shape: event types and order, JSON key paths and types, header names, line endings, "
        "comments, timing. Findings are printed in tiers; the exit status is the worst tier's (0 none or cosmetic "
        "only, 4 changed, 5 breaking, 1 not compared); --update replaces the recordings that drifted.",
        ("ssemock drift cassettes --target https://api.openai.com --header 'Authorization: Bearer ${OPENAI_API_KEY}'",
         "ssemock drift cassettes/chat.yaml --target https://api.openai.com --json --fail-on breaking")),
    "check-client": Command(
        "grade any SSE client: run it once per recording x preset and report what it got wrong (exit 1 on a failure)",
        "Run a client command (any language) once per case, a recording as recorded or under a preset, against "
        "an in-process replay server it finds through SSEMOCK_URL and the SDK base URL variables. The client prints "
        "the events it read (JSON lines of type, data, id) or the answer it assembled (one JSON object), and exits "
        "non-zero when it reports an error. Each case is graded pass, fail or n/a with its reason, in two "
        "categories: conformance and resilience; each failure prints the command reproducing it against ssemock "
        "serve. Exit 0 when no case fails, 1 when one does.",
        ("ssemock check-client --cassette openai-chat-finish-length-usage -- python -m ssemock.checkclient.reader",
         "ssemock check-client --client-timeout 2 --json report.json -- python my_client.py",
         "ssemock check-client --compare old.json --scenario split-crlf,crlf -- node client.mjs")),
}
"""The sub-commands of ``ssemock``, in the order ``ssemock --help`` lists them."""
JOBS = """ssemock answers your streaming client as a provider would, offline:
  test      a fake provider per test (pytest fixture sse_mock), its stream broken on purpose by scenarios
  develop   ssemock serve: the bundled or your recordings as a local provider
  record    ssemock record: a reverse proxy in front of the real provider writes cassettes"""
DESCRIPTION = "Record and replay Server-Sent Events streams.\n\n" + JOBS
"""``ssemock --help``'s description: what it is, and its three jobs."""
EXAMPLES = ("ssemock serve", "ssemock inspect openai-chat-tool-calls-usage",
            "ssemock record --target https://api.openai.com --cassettes cassettes")
"""``ssemock --help``'s examples."""


def epilog(examples: tuple[str, ...]) -> str:
    """The ``examples:`` block that ends a ``--help``."""
    return "examples:\n" + "\n".join(f"  {example}" for example in examples)


class HelpFormatter(argparse.HelpFormatter):
    """argparse's formatter, filling each paragraph of a description on its own and keeping indented lines
    (the jobs, the examples) as written."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        out = []
        for paragraph in text.split("\n\n"):
            lines = paragraph.split("\n")
            if any(line.startswith("  ") for line in lines[1:]) or paragraph.startswith("examples:"):
                out.append("\n".join(indent + line for line in lines))
            else:
                out.append(textwrap.fill(" ".join(paragraph.split()), width, initial_indent=indent,
                                         subsequent_indent=indent, break_on_hyphens=False))
        return "\n\n".join(out)
