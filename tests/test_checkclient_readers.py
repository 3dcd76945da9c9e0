"""The SSE-level reader adapters of examples/check-client/ added for the report card (sseclient-py,
requests-sse, aiohttp-sse-client2, node's eventsource, @microsoft/fetch-event-source), each with its
release from the package registry, against a real replay server.

On the recording as recorded each prints the events ``ssemock.sse`` dispatches from the recorded stream.
Under presets, what each library's own code explains:

* @microsoft/fetch-event-source (``parse.ts``, ``getMessages``) dispatches on every empty line, so a block
  of only ``retry:``/``id:`` lines becomes an event with empty data, which WHATWG does not dispatch (the
  data buffer is empty): ``meta-blocks`` fails;
* requests-sse catches a failed read in ``__next__`` and only logs it before reconnecting, so a cut body
  ends as a clean one does: ``cut-mid-event`` is not reported.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ssemock.checkclient.contract import read_output

from .checkclients import EXAMPLES, check_client, failing, recorded_events, release_node, release_python, run_once

CASSETTE = "openai-chat-finish-length-usage"
PYTHON_READERS = {
    "sseclient_py_reader.py": ("sseclient-py", "1.9.0", "requests==2.34.2"),
    "requests_sse_reader.py": ("requests-sse", "0.5.3"),
    "aiohttp_sse_client2_reader.py": ("aiohttp-sse-client2", "0.3.0"),
}
NODE_READERS = {
    "eventsource_reader.mjs": ("eventsource", "5.1.5"),
    "fetch_event_source_reader.mjs": ("@microsoft/fetch-event-source", "2.0.1"),
}


def node_command(tmp_path: Path, node: str, adapter: str) -> list[str]:
    """``node ADAPTER 1.5`` with the adapter copied beside a ``node_modules`` of its release."""
    shutil.copy(EXAMPLES / adapter, tmp_path / adapter)
    (tmp_path / "node_modules").symlink_to(release_node(*NODE_READERS[adapter]))
    return [node, str(tmp_path / adapter), "1.5"]


def python_command(adapter: str) -> list[str]:
    return [str(release_python(*PYTHON_READERS[adapter])), str(EXAMPLES / adapter), "--timeout", "1.5"]


def assert_prints_the_recorded_events(command: list[str]) -> None:
    done = run_once(CASSETTE, command)
    assert done.returncode == 0, done.stderr
    printed = read_output(done.stdout.encode()).events
    expected = recorded_events(CASSETTE)
    assert len(printed) == len(expected) == 5
    assert [(e.type, e.data) for e in printed] == [(e.type, e.data) for e in expected]


@pytest.mark.parametrize("adapter", sorted(PYTHON_READERS))
def test_python_reader_prints_the_recorded_events(adapter: str) -> None:
    assert_prints_the_recorded_events(python_command(adapter))


@pytest.mark.parametrize("adapter", sorted(NODE_READERS))
def test_node_reader_prints_the_recorded_events(tmp_path: Path, node: str, adapter: str) -> None:
    assert_prints_the_recorded_events(node_command(tmp_path, node, adapter))


def test_fetch_event_source_dispatches_a_block_without_data(tmp_path: Path, node: str) -> None:
    command = node_command(tmp_path, node, "fetch_event_source_reader.mjs")
    done, report = check_client(tmp_path, "--cassette", CASSETTE, "--client-timeout", "1.5", "--shrink-budget", "0",
                                "--scenario", "meta-blocks,crlf,cut-mid-event", command=command)
    assert done.returncode == 1, done.stdout + done.stderr
    assert failing(report) == {"meta-blocks"}


def test_requests_sse_does_not_report_a_cut_body(tmp_path: Path) -> None:
    done, report = check_client(tmp_path, "--cassette", CASSETTE, "--client-timeout", "1.5", "--shrink-budget", "0",
                                "--scenario", "meta-blocks,crlf,cut-mid-event,http-500",
                                command=python_command("requests_sse_reader.py"))
    assert done.returncode == 1, done.stdout + done.stderr
    assert failing(report) == {"cut-mid-event"}
