"""``aimock_peer``: ssemock against aimock (``@copilotkit/aimock``, a Node.js mock LLM server with
fixtures), a peer a user would pick instead, where the comparison is fair: start-up and a long
streamed answer without delays. Both serve the same OpenAI chat completion stream
(``POST /v1/chat/completions``, ``"stream": true``): ours from one stub (``ssemock serve --stubs
FILE``, no cassettes), the peer from one fixture (``aimock --config FILE``, ``llm.fixtures``).

Run when installed: ``npm ci --prefix benchmarks/node`` (the version pinned in
``benchmarks/node/package-lock.json``, run with the ``node`` on ``PATH``). Otherwise every figure
has no value and its goal says how to install it; the run goes on.

* ``aimock_peer.cold_start``: seconds from starting the server process to the end of the answer
  to its first request (a short streamed chat completion, read whole and checked), measured as
  :func:`benchmarks.cold_start.first_request` measures ours against its baseline: runs alternate
  ours / peer, the first pair only warms the file cache (ssemock's cache directory a temporary
  ``SSEMOCK_CACHE_DIR``) and compiles ours's bytecode, which is kept (a temporary
  ``PYTHONPYCACHEPREFIX``, whatever ``PYTHONDONTWRITEBYTECODE`` says), as an installed package has
  it; median, min/median/max in ``spread``.
* ``aimock_peer.cold_start_cpu``: the same runs' CPU seconds (user + system) of the server
  process until it answered (its threads' run time, ``/proc/PID/task/*/schedstat``), which a
  loaded machine disturbs less than wall time.
* ``aimock_peer.throughput``: MB/s of one long streamed answer (the real recording's text
  repeated: 1,000,000 characters, 40,000 with ``--quick``), no delays, read by the benchmark
  client (:mod:`benchmarks.clients`, its protocol ending at the body's last chunk: aimock keeps
  the connection open) in its own process; a checked answer and a warm-up run each, then runs
  alternate, 7 (2 with ``--quick``). Both deliver the same text, checked before the runs; the
  events differ: ours cuts the text into token-like pieces, one per event, as OpenAI does, and
  sends OpenAI's fields (``system_fingerprint``, ``obfuscation``…); aimock cuts it every
  ``chunkSize`` characters, set here to the mean length of our pieces so that both send about as
  many events (aimock's default, 20 characters, sends about 4 times fewer). The unit says how many
  events and bytes each sent. aimock writes every event of an answer at once, not waiting for the
  reader (its SSE writer ignores what ``res.write`` returns), so a slow reader costs it memory;
  ours waits for the socket to drain.
* ``aimock_peer.throughput_events``: the same runs in events per second.
* ``aimock_peer.throughput_cpu``: the server's CPU seconds per stream (all its threads,
  ``/proc``), the same runs.
* ``aimock_peer.stub_answer``: milliseconds from sending the request to the last byte of a
  2,000-token answer (:func:`benchmarks.stub_synthesis.answer_text`), over HTTP, end to end: ours
  synthesizes it from its stub at every request (``ssemock serve --stubs FILE``, the default timing
  scale, 1: the stub has no timing, so its events go out as one burst, each its own write), aimock
  sends its fixture of the same text cut every ``chunkSize`` characters (the mean length of our
  tokens, so that both send about as many events). Read by the benchmark client in its own process;
  a checked answer and two warm-up runs each, then runs alternate (21, 5 with ``--quick``). Goal: at
  most aimock's time (ratio <= 1.0).
* ``aimock_peer.stub_answer_scale0``: the same with ``ssemock serve --timing-scale 0`` (same runs,
  interleaved with both).
* ``aimock_peer.stub_answer_cpu``: the server's CPU milliseconds per answer (all its threads), the
  default-scale runs.
* ``aimock_peer.stub_answer_floor`` and ``stub_answer_floor_cpu``: the same, interleaved, for the
  floor of an answer that keeps every event boundary: a raw asyncio protocol in its own process
  (``python -m benchmarks.servers floor-burst``) sending the bytes of one of our answers, each event
  its own write of one HTTP chunk, with nothing else (no HTTP parsing, matching, synthesis or journal).
  aimock does not keep them: Node's ``http`` corks the socket for the rest of the turn at each
  ``res.write``, so an answer written in one turn leaves in a few ``writev`` calls.
* ``aimock_peer.stub_answer_over_floor``: ours at the default scale against that floor.
* ``aimock_peer.stub_answer_reads``: the benchmark client's reads per answer (chunks read together
  counted once; median of 3 more runs each), ours against aimock, the floor's and ours at scale 0 in
  the unit.

Every figure is reported as ours against the peer (``baseline`` is aimock; for ``stub_answer_over_floor``
the floor), with no goal but ``stub_answer``'s and ``stub_answer_scale0``'s.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ssemock.providers.tokens import split_tokens
from ssemock.sse import Event, decode

from . import clients, figure, noisy, spread
from .clients import StreamProtocol
from .common import ROOT, median, raise_open_files_limit, real_chunks, standalone, stop_processes
from .timing_fidelity import cpu_seconds as thread_cpu_seconds

__all__ = ["run"]

NODE_DIR = ROOT / "benchmarks" / "node"
PACKAGE = NODE_DIR / "node_modules" / "@copilotkit" / "aimock"
INSTALL = "not installed: npm ci --prefix benchmarks/node"
REPORTED = "reported (ours against the peer)"
NAMES = ("cold_start", "cold_start_cpu", "throughput", "throughput_events", "throughput_cpu", "stub_answer",
         "stub_answer_scale0", "stub_answer_cpu", "stub_answer_floor", "stub_answer_floor_cpu",
         "stub_answer_over_floor", "stub_answer_reads")
UNITS = ("s", "CPU s", "MB/s", "events/s", "CPU s per stream", "ms", "ms", "CPU ms", "ms", "CPU ms", "ms", "reads")
STUB_TOKENS = 2000
PATH = "/v1/chat/completions"
GREETING = "Hello! How can I help you today?"
MB = 1_000_000


def aimock_command() -> list[str] | None:
    """``node …/aimock-cli.js`` (the package's ``aimock`` bin), or None when node or the package is missing."""
    node = shutil.which("node")
    manifest = PACKAGE / "package.json"
    if node is None or not manifest.is_file():
        return None
    meta = json.loads(manifest.read_text(encoding="utf-8"))
    script = PACKAGE / meta["bin"]["aimock"]
    return [node, str(script)] if script.is_file() else None


def aimock_version() -> str:
    return str(json.loads((PACKAGE / "package.json").read_text(encoding="utf-8"))["version"])


def not_installed() -> list[dict[str, Any]]:
    """The module's figures without values, saying how to install the peer."""
    return [{**figure(f"aimock_peer.{name}", 0.0, unit, baseline=None, goal=INSTALL, met=True), "value": None,
             "met": None} for name, unit in zip(NAMES, UNITS)]


def chat_request(message: str) -> bytes:
    return json.dumps({"model": "gpt-4o", "stream": True, "messages": [{"role": "user", "content": message}]}).encode()


def long_text(chars: int) -> str:
    """``chars`` characters of the real recording's text (thinking and answer), repeated."""
    pieces = []
    for event in decode(b"".join(real_chunks())):
        if isinstance(event, Event) and event.data.startswith("{"):
            delta = json.loads(event.data).get("delta") or {}
            pieces.append(delta.get("text") or delta.get("thinking") or "")
    text = "".join(pieces)
    return (text * (chars // len(text) + 1))[:chars]


def write_servers(tmp: Path, message: str, text: str, chunk_size: int | None) -> dict[str, list[str]]:
    """One stub file and one aimock config (one fixture) answering ``message`` with ``text``; the
    commands starting each server on a free port of 127.0.0.1."""
    empty = tmp / "no-cassettes"
    empty.mkdir(exist_ok=True)
    stubs = tmp / f"{message}.yaml"
    # A JSON string is a YAML double-quoted scalar.
    stubs.write_text(f"ssemock_stubs: 1\nstubs:\n  - name: {message}\n    reply: {{text: {json.dumps(text)}}}\n",
                     encoding="utf-8")
    fixture: dict[str, Any] = {"match": {"userMessage": message}, "response": {"content": text}}
    if chunk_size is not None:
        fixture["chunkSize"] = chunk_size
    fixtures = tmp / f"{message}.json"
    fixtures.write_text(json.dumps({"fixtures": [fixture]}), encoding="utf-8")
    config = tmp / f"{message}-aimock.json"
    config.write_text(json.dumps({"llm": {"fixtures": str(fixtures), "logLevel": "silent"}}), encoding="utf-8")
    command = aimock_command()
    assert command is not None
    return {
        "ours": [sys.executable, "-m", "ssemock", "serve", "--port", "0", "--cassettes", str(empty),
                 "--stubs", str(stubs), "--quiet"],
        "aimock": [*command, "--config", str(config), "--port", "0"],
    }


@contextlib.contextmanager
def started(*commands: list[str], env: dict[str, str]) -> Iterator[list[tuple[subprocess.Popen[str], str]]]:
    """Start servers side by side; yields each process and its base URL, read from its output (the
    first line naming an ``http://`` URL). Terminated on exit."""
    procs = [subprocess.Popen(c, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
             for c in commands]
    try:
        yield [(proc, base_url(proc, command)) for proc, command in zip(procs, commands)]
    finally:
        stop_processes(procs, timeout=10)


def base_url(proc: subprocess.Popen[str], command: list[str]) -> str:
    assert proc.stdout is not None
    line = ""
    for _ in range(20):
        line = proc.stdout.readline()
        if not line or "http://" in line:
            break
    url = next((word for word in line.split() if word.startswith("http://")), None)
    if url is None:
        raise RuntimeError(f"{command[:4]} did not start: {line!r}")
    return url.rstrip("/")


class UntilLastChunk(StreamProtocol):
    """The benchmark client's protocol, ending the stream at the last chunk of the body: aimock
    answers ``Connection: keep-alive`` to a request saying ``Connection: close`` and keeps the
    connection open (Node's default: 5 s), so the end of the body, not of the connection, ends a run."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport
        super().connection_made(transport)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.complete or self.buf.endswith(b"\r\n0\r\n\r\n"):
            self.transport.close()  # connection_lost parses what is left and notes the time


class Client:
    """The benchmark client (:mod:`benchmarks.clients`) with :class:`UntilLastChunk`, in its own
    process (``python -m benchmarks.aimock_peer --client``), running one job at a time when asked,
    so that the server's CPU time can be read around each stream without starting a process each time."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "benchmarks.aimock_peer", "--client"], cwd=ROOT,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def run(self, job: dict[str, Any]) -> dict[str, Any]:
        """The result of ``job`` (see :func:`benchmarks.clients.run_job`)."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(job) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"benchmark client failed with status {self.proc.wait()}")
        return json.loads(line)  # type: ignore[no-any-return]

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc.stdin is not None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()
        self.proc.wait(timeout=30)


def client_main() -> None:
    """``python -m benchmarks.aimock_peer --client``: one job (JSON) a line on stdin, its result a line on stdout."""
    clients.StreamProtocol = UntilLastChunk  # type: ignore[misc]
    raise_open_files_limit()
    for line in sys.stdin:
        print(json.dumps(asyncio.run(clients.run_job(json.loads(line)))), flush=True)


def post(url: str, body: bytes) -> bytes:
    """The whole answer to ``POST url`` (chat completion ``body``); raises unless 200."""
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=60)
    try:
        conn.request("POST", parts.path, body, {"Content-Type": "application/json"})
        response = conn.getresponse()
        data = response.read()
        if response.status != 200:
            raise RuntimeError(f"POST {url}: status {response.status}: {data[:200]!r}")
        return data
    finally:
        conn.close()


def streamed_text(body: bytes) -> tuple[str, int]:
    """The text of an OpenAI chat completion stream, and its number of events (``[DONE]`` included)."""
    events = [e for e in decode(body) if isinstance(e, Event)]
    text = []
    for event in events:
        if event.data != "[DONE]":
            for choice in json.loads(event.data).get("choices") or ():
                text.append((choice.get("delta") or {}).get("content") or "")
    return "".join(text), len(events)


def first_answer(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Seconds from starting ``command`` to the end of the answer to one chat completion, and the
    CPU seconds (user + system) of the server process by then."""
    begin = time.perf_counter()
    with started(command, env=env) as [(proc, url)]:
        body = post(url + PATH, chat_request("hello"))
        elapsed = time.perf_counter() - begin
        cpu = thread_cpu_seconds(proc.pid)  # its live threads: the server runs in its main thread
    if streamed_text(body)[0] != GREETING:
        raise RuntimeError(f"{command[:4]}: wrong answer {body[:300]!r}")
    return elapsed, cpu


def cold_starts(tmp: Path, env: dict[str, str], reps: int) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    commands = write_servers(tmp, "hello", GREETING, None)
    runs: dict[str, list[tuple[float, float]]] = {"ours": [], "aimock": []}
    for index in range(reps + 1):
        for kind in ("ours", "aimock") if index % 2 == 0 else ("aimock", "ours"):
            runs[kind].append(first_answer(commands[kind], env))
    wall = {k: [w for w, _ in v[1:]] for k, v in runs.items()}  # the first pair warms the caches
    cpu = {k: [c for _, c in v[1:]] for k, v in runs.items()}
    return wall, cpu


def checked_answers(servers: dict[str, tuple[int, str]], body: bytes, text: str) -> dict[str, tuple[int, int]]:
    """Each server's answer to ``body`` (``servers``: kind -> (pid, URL)), checked to carry ``text``: its
    number of events and of bytes, by kind."""
    sent = {}
    for kind, (_, url) in servers.items():
        answer = post(url, body)
        got, events = streamed_text(answer)
        if got != text:
            raise RuntimeError(f"aimock_peer: {kind} sent another text ({len(got)} characters, not {len(text)})")
        sent[kind] = (events, len(answer))
    return sent


def throughputs(tmp: Path, env: dict[str, str], chars: int, runs: int) -> dict[str, Any]:
    """MB/s, events/s and server CPU seconds per stream of ours and aimock, alternating, and what each sent."""
    text = long_text(chars)
    chunk_size = max(1, round(len(text) / len(split_tokens(text))))
    commands = write_servers(tmp, "long", text, chunk_size)
    body = chat_request("long")
    job = {"n": 1, "body": body.decode(), "keep_times": False, "timeout": 120}
    out: dict[str, Any] = {"chunk_size": chunk_size, "chars": len(text),
                           "mbs": {"ours": [], "aimock": []}, "eps": {"ours": [], "aimock": []},
                           "cpu": {"ours": [], "aimock": []}}
    with started(commands["ours"], commands["aimock"], env=env) as [(ours, ours_url), (peer, peer_url)], \
            Client() as client:
        servers = {"ours": (ours.pid, ours_url + PATH), "aimock": (peer.pid, peer_url + PATH)}
        out["sent"] = checked_answers(servers, body, text)
        for index in range(-1, runs):  # run -1 warms the client and the servers
            for kind in ("ours", "aimock") if index % 2 == 0 else ("aimock", "ours"):
                pid, url = servers[kind]
                events, size = out["sent"][kind]
                before = thread_cpu_seconds(pid)
                stream = client.run({**job, "url": url})["streams"][0]
                cpu = thread_cpu_seconds(pid) - before
                got = sum(stream["sizes"])  # ours varies by a few bytes: random identifiers and padding
                if not stream["ok"] or abs(got - size) > size // 100:
                    raise RuntimeError(f"aimock_peer: {kind} sent a wrong body: {stream}"[:300])
                if index >= 0:
                    out["mbs"][kind].append(got / MB / stream["elapsed"])
                    out["eps"][kind].append(events / stream["elapsed"])
                    out["cpu"][kind].append(cpu)
    return out


def stub_answers(tmp: Path, env: dict[str, str], runs: int) -> dict[str, Any]:
    """Milliseconds per 2,000-token answer (request sent to last byte) of ours at timing scale 1 and 0,
    of aimock and of the floor of a burst (our answer's bytes, one write per event, from a raw asyncio
    protocol: :func:`benchmarks.servers.serve_burst`), alternating; the servers' CPU milliseconds per
    answer, what each sent, and the client's reads per answer (3 more runs each, timing every chunk)."""
    from .stub_synthesis import answer_text

    text = answer_text(STUB_TOKENS)
    chunk_size = max(1, round(len(text) / len(split_tokens(text))))
    commands = write_servers(tmp, "story", text, chunk_size)
    kinds = {"ours": commands["ours"], "ours0": [*commands["ours"], "--timing-scale", "0"],
             "aimock": commands["aimock"]}
    body = chat_request("story")
    job = {"n": 1, "body": body.decode(), "keep_times": False, "timeout": 60}
    out: dict[str, Any] = {"chunk_size": chunk_size, "ms": {k: [] for k in [*kinds, "floor"]},
                           "cpu": {k: [] for k in [*kinds, "floor"]}, "reads": {}}
    with started(*kinds.values(), env=env) as servers, Client() as client:
        found = {kind: (proc.pid, url + PATH) for kind, (proc, url) in zip(kinds, servers)}
        answer = tmp / "ours-answer.txt"
        answer.write_bytes(post(found["ours"][1], body))
        with floor_server(answer) as (pid, url):
            found["floor"] = (pid, url + PATH)
            out["sent"] = checked_answers(found, body, text)
            order = list(found)
            for index in range(-2, runs):  # runs -2 and -1 warm the client and the servers
                for kind in order[index % len(order):] + order[:index % len(order)]:  # each kind first in turn
                    pid, url = found[kind]
                    before = thread_cpu_seconds(pid)
                    stream = client.run({**job, "url": url})["streams"][0]
                    cpu = thread_cpu_seconds(pid) - before
                    if not stream["ok"]:
                        raise RuntimeError(f"aimock_peer: {kind} sent a wrong body: {stream}"[:300])
                    if index >= 0:
                        out["ms"][kind].append(1000 * stream["elapsed"])
                        out["cpu"][kind].append(1000 * cpu)
            for kind, (_, url) in found.items():  # chunks read together share their time
                out["reads"][kind] = median([len(set(client.run({**job, "url": url, "keep_times": True})
                                                     ["streams"][0]["times"])) for _ in range(3)])
    return out


@contextlib.contextmanager
def floor_server(body_file: Path) -> Iterator[tuple[int, str]]:
    """``python -m benchmarks.servers floor-burst BODY_FILE``: its pid and base URL; stopped on exit."""
    proc = subprocess.Popen([sys.executable, "-m", "benchmarks.servers", "floor-burst", str(body_file), "0"],
                            cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stderr is not None
        port = proc.stdout.readline().strip()
        if not port.isdigit():
            proc.wait(timeout=10)
            raise RuntimeError(f"benchmarks.servers floor-burst did not start: {proc.stderr.read()[-500:]}")
        yield proc.pid, f"http://127.0.0.1:{port}"
    finally:
        stop_processes([proc], timeout=10)
        if proc.stderr is not None:
            proc.stderr.close()


def run(quick: bool = False) -> list[dict[str, Any]]:
    if aimock_command() is None:
        return not_installed()
    reps, runs, chars = (1, 2, 40_000) if quick else (9, 7, 1_000_000)
    with tempfile.TemporaryDirectory(prefix="ssemock-bench-") as name:
        tmp = Path(name)
        env = {**os.environ, "SSEMOCK_CACHE_DIR": str(tmp / "cache")}
        # as installed: compiled bytecode kept (cold_start.first_request_no_pyc measures a start without)
        kept = {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}
        wall, cpu = cold_starts(tmp, {**kept, "PYTHONPYCACHEPREFIX": str(tmp / "bytecode")}, reps)
        flow = throughputs(tmp, env, chars, runs)
        stub = stub_answers(tmp, env, 5 if quick else 21)
    peer = f"baseline: aimock {aimock_version()}"
    (ours_events, ours_bytes), (peer_events, peer_bytes) = flow["sent"]["ours"], flow["sent"]["aimock"]
    sent = (f"{flow['chars']:,} text characters; ours {ours_events:,} events, {ours_bytes:,} bytes; aimock "
            f"(chunkSize {flow['chunk_size']}) {peer_events:,} events, {peer_bytes:,} bytes")

    def reported(name: str, values: dict[str, list[float]], unit: str) -> dict[str, Any]:
        return figure(f"aimock_peer.{name}", median(values["ours"]), f"{unit} ({peer})",
                      baseline=median(values["aimock"]), goal=REPORTED, met=True,
                      spread=spread(values["ours"], values["aimock"]))

    return [
        reported("cold_start", wall, "s to the first answer, one stub / one fixture"),
        reported("cold_start_cpu", cpu, "CPU s to the first answer"),
        reported("throughput", flow["mbs"], f"MB/s, {sent}"),
        reported("throughput_events", flow["eps"], "events/s, same streams"),
        reported("throughput_cpu", flow["cpu"], "server CPU s per stream, same streams"),
        *stub_figures(stub, peer),
    ]


def stub_figures(stub: dict[str, Any], peer: str) -> list[dict[str, Any]]:
    """``stub_answer`` (goal: at most aimock's time), ``stub_answer_scale0``, ``stub_answer_cpu``, the
    floor's ``stub_answer_floor`` and ``stub_answer_floor_cpu``, ``stub_answer_over_floor`` (ours against
    the floor) and ``stub_answer_reads``."""
    sent = stub["sent"]
    (ours_events, ours_bytes), (peer_events, peer_bytes) = sent["ours"], sent["aimock"]
    sent_text = (f"ours {ours_events:,} events, {ours_bytes:,} bytes; aimock (chunkSize {stub['chunk_size']}) "
                 f"{peer_events:,} events, {peer_bytes:,} bytes")
    ms, cpu, reads, goal = stub["ms"], stub["cpu"], stub["reads"], "ratio <= 1.0 (aimock's time)"

    def one(name: str, values: dict[str, list[float]], kind: str, unit: str, base: str = "aimock",
            **goals: Any) -> dict[str, Any]:
        value, baseline = median(values[kind]), median(values[base])
        flips = noisy(values[kind], values[base], lambda o, b: o <= b) if "goal" in goals else ""
        return figure(f"aimock_peer.{name}", value, unit if base != "aimock" else f"{unit} ({peer})",
                      baseline=baseline, goal=goals.get("goal", REPORTED), met=goals.get("met", True),
                      spread=spread(values[kind], values[base]) + flips)

    floor = "the floor: a raw asyncio protocol writing our answer's events, one write each, no timer"
    return [
        one("stub_answer", ms, "ours", f"ms per {STUB_TOKENS:,}-token answer over HTTP, timing scale 1, {sent_text}",
            goal=goal, met=median(ms["ours"]) <= median(ms["aimock"])),
        one("stub_answer_scale0", ms, "ours0", "ms per answer, timing scale 0, same runs",
            goal=goal, met=median(ms["ours0"]) <= median(ms["aimock"])),
        one("stub_answer_cpu", cpu, "ours", "server CPU ms per answer, timing scale 1, same runs"),
        one("stub_answer_floor", ms, "floor", f"ms per answer of {floor}, same runs"),
        one("stub_answer_floor_cpu", cpu, "floor", "server CPU ms per answer of the floor, same runs"),
        one("stub_answer_over_floor", ms, "ours", "ms per answer, timing scale 1 (baseline: the floor)", base="floor"),
        figure("aimock_peer.stub_answer_reads", reads["ours"], f"client reads per answer (medians of 3; "
               f"floor {reads['floor']:g}, ours at scale 0 {reads['ours0']:g}) ({peer})",
               baseline=reads["aimock"], goal=REPORTED, met=True),
    ]


if __name__ == "__main__":
    if sys.argv[1:] == ["--client"]:
        client_main()
    else:
        standalone(run)
