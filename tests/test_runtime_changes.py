"""Changes to a running server: stubs added, listed and cleared over ``/_ssemock/stubs``, the default scenario
set and cleared over ``/_ssemock/scenario``, the faults by rate over ``/_ssemock/chaos``; the same from Python
(``MockServer``, the pytest fixture).

Each test runs the real ``ssemock serve`` command (or ``MockServer``) on 127.0.0.1 and talks to it with
real clients: httpx for the admin routes, the openai SDK for the answers.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from ssemock import ChaosError, MockServer, ScenarioError
from ssemock.mockserver import collect_cassettes
from ssemock.stubs.files import MAX_STUB_FILE
from ssemock.workers import PEER_TIMEOUT
from tests.test_workers import serve

from .sessions import INI, preload_clients

pytest_plugins = ["pytester"]
preload_clients()

WEATHER = """\
ssemock_stubs: 1
stubs:
  - name: weather
    match: {contains: weather}
    reply: {text: Sunny in Paris}
"""
RECORDED = "openai-chat-finish-length-usage"  # a bundled recording with LF line ends


def chat(base: str, prompt: str) -> str:
    """The text the openai SDK assembles from a streamed chat completion of ``prompt``."""
    with openai.OpenAI(base_url=base + "/v1", api_key="k", max_retries=0) as client:
        stream = client.chat.completions.create(
            model="gpt-4o", messages=[{"role": "user", "content": prompt}], stream=True
        )
        return "".join(chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices)


def test_a_stub_added_over_http_answers_the_next_openai_request_before_the_files_stubs(tmp_path: Path) -> None:
    stubs = tmp_path / "stubs"
    stubs.mkdir()
    catch_all = stubs / "catch-all.yaml"
    catch_all.write_text("ssemock_stubs: 1\nstubs:\n  - name: from-file\n    reply: {text: From the file}\n")
    with serve(tmp_path, "--stubs", str(stubs)) as served:
        url = served.url
        assert chat(url, "weather?") == "From the file"
        added = httpx.post(f"{url}/_ssemock/stubs", content=WEATHER, headers={"Content-Type": "application/yaml"})
        assert (added.status_code, added.json()) == (200, {"added": 1, "stubs": ["weather"]})
        assert chat(url, "What is the weather in Paris?") == "Sunny in Paris"
        assert chat(url, "hello") == "From the file"  # the added stub's condition does not hold
        listed = httpx.get(f"{url}/_ssemock/stubs").json()
        assert [(s["name"], s["added"], s["source"], s["used"]) for s in listed] == [
            ("weather", True, "POST /_ssemock/stubs", 1),
            ("from-file", False, str(catch_all), 2),
        ]
        assert listed[0]["match"] == "contains='weather'" and listed[1]["match"] == "any request"
        # the same document as JSON, added again: the latest addition is tried first
        document = {
            "ssemock_stubs": 1,
            "stubs": [{"name": "rain", "match": {"contains": "weather"}, "reply": {"text": "Rain in Paris"}}],
        }
        assert httpx.post(f"{url}/_ssemock/stubs", json=document).json() == {"added": 1, "stubs": ["rain"]}
        assert chat(url, "weather?") == "Rain in Paris"

        assert httpx.delete(f"{url}/_ssemock/stubs").json() == {"cleared": 2}
        assert chat(url, "weather?") == "From the file"  # the file's stubs stay
        assert [s["name"] for s in httpx.get(f"{url}/_ssemock/stubs").json()] == ["from-file"]
        journal = httpx.get(f"{url}/_ssemock/requests").json()
        assert [e["stub"] for e in journal] == ["from-file", "weather", "from-file", "rain", "from-file"]


def test_a_stub_added_over_http_answers_the_next_request_of_a_chromium_page_which_cannot_add_one(
    tmp_path: Path,
) -> None:
    script = Path(__file__).parent / "node" / "runtime-stubs.mjs"
    (tmp_path / "none").mkdir()
    with serve(tmp_path, "--cassettes", str(tmp_path / "none")) as served:
        done = subprocess.run(["node", str(script), served.url], capture_output=True, timeout=120, check=False)
        assert done.returncode == 0, done.stderr.decode()[-2000:]
        result = json.loads(done.stdout)
        journal = [e for e in httpx.get(f"{served.url}/_ssemock/requests").json() if e["path"] != "/favicon.ico"]
    assert result["before"] == {"status": 404, "events": []}  # no cassette, no stub yet
    assert result["added"] == {"status": 200, "body": {"added": 1, "stubs": ["weather"]}}
    for answer in (result["after"], result["last"]):
        *chunks, done_marker = answer["events"]
        assert answer["status"] == 200 and done_marker == "[DONE]"  # OpenAI's stream terminator
        text = "".join(
            json.loads(c)["choices"][0]["delta"].get("content") or "" for c in chunks if json.loads(c)["choices"]
        )
        assert text == "Sunny in Paris"
    # the page's own attempts: refused by the server (403, no CORS header: the browser hides even that)
    attempts = result["fromPage"]
    assert "blocked" in attempts["simple"] and "blocked" in attempts["json"] and attempts["noCors"] == {"opaque": True}
    assert result["listed"] == ["weather"]
    assert [(e["path"], e["stub"]) for e in journal] == [("/v1/chat/completions", None)] + [
        ("/v1/chat/completions", "weather")
    ] * 2


def test_the_default_scenario_set_by_name_and_by_document_then_cleared(tmp_path: Path) -> None:
    cassette = collect_cassettes(None)[RECORDED]
    inter = cassette.interactions[0]
    recorded = inter.response.body
    assert b"\r" not in recorded and recorded.count(b"\n") >= 10

    def replay(client: httpx.Client, **headers: str) -> httpx.Response:
        return client.request(
            inter.request.method,
            inter.request.path,
            content=inter.request.body,
            headers={"X-SSEMock-Cassette": RECORDED, **headers},
        )

    with serve(tmp_path, "--timing-scale", "0") as served, httpx.Client(base_url=served.url) as client:
        assert replay(client).content == recorded
        put = client.put("/_ssemock/scenario", content="crlf")
        assert (put.status_code, put.json()) == (200, {"scenario": ["crlf"]})
        assert client.get("/_ssemock/scenario").json() == {"scenario": ["crlf"], "added": []}
        # every line ending of the recording becomes CR LF; the events a parser dispatches are the same
        assert replay(client).content == recorded.replace(b"\n", b"\r\n")
        assert client.get("/_ssemock/requests").json()[-1]["scenario"] == "crlf"

        document = {"name": "rate-limited", "steps": [{"http-error": {"status": 429, "headers": {"retry-after": "7"}}}]}
        put = client.put("/_ssemock/scenario", json=document)
        assert (put.status_code, put.json()) == (200, {"scenario": ["rate-limited"]})
        answer = replay(client)
        assert (answer.status_code, answer.headers["Retry-After"]) == (429, "7")
        assert "rate-limited" in [s["name"] for s in client.get("/_ssemock/scenarios").json()]
        assert client.get("/_ssemock/scenario").json() == {"scenario": ["rate-limited"], "added": ["rate-limited"]}
        assert replay(client, **{"X-SSEMock-Scenario": "crlf"}).content == recorded.replace(b"\n", b"\r\n")

        assert client.delete("/_ssemock/scenario").json() == {"scenario": [], "removed": ["rate-limited"]}
        assert replay(client).content == recorded
        gone = replay(client, **{"X-SSEMock-Scenario": "rate-limited"})
        assert (gone.status_code, gone.json()["error"]["type"]) == (400, "ssemock_unknown_scenario")


STUBS, SCENARIO = "POST /_ssemock/stubs", "PUT /_ssemock/scenario"
YAML, JSON, TEXT = "application/yaml", "application/json", "text/plain"
INVALID = "ssemock_invalid_change"
BAD_BODIES = [  # (route, body, Content-Type (None: none), the JSON error's type, kind and field)
    (STUBS, "ssemock_stubs: 1\nstubs: [{reply: {text: 5}}]\n", YAML, INVALID, "stub", "stubs[0].reply.text"),
    (
        STUBS,
        json.dumps({"ssemock_stubs": 1, "stubs": [{"reply": {}, "times": 0}]}),
        JSON,
        INVALID,
        "stub",
        "stubs[0].times",
    ),
    (STUBS, "ssemock_stubs: 1\nstubs: [{reply: {txt: hi}}]\n", None, INVALID, "stub", "stubs[0].reply.txt"),
    (STUBS, "stubs: [{reply: {text: hi}}]\n", YAML, INVALID, "stub", "ssemock_stubs"),
    (STUBS, '{"ssemock_stubs": 1, "stubs": [', JSON, INVALID, "stub", "line 1, column 32"),
    (STUBS, "ssemock_stubs: 1\nstubs: &a [*a]\n", TEXT, INVALID, "stub", "line 2"),
    (SCENARIO, "steps:\n  - stall: {seconds: -1}\n", YAML, INVALID, "scenario", "steps[0].stall.seconds"),
    (SCENARIO, "name: crlf\nsteps: []\n", YAML, INVALID, "scenario", "name"),
    (STUBS, '{"ssemock_stubs": 1, "stubs": [{"times": ' + "9" * 5000 + "}]}", JSON, INVALID, "stub", ""),
    (SCENARIO, '["crlf", "no-such-scenario"]', JSON, "ssemock_unknown_scenario", None, None),
    (SCENARIO, ",".join(["crlf"] * 9), TEXT, "ssemock_too_many_scenarios", None, None),
]


def test_a_bad_body_is_a_400_naming_the_field_and_changes_nothing() -> None:
    with MockServer([], timing_scale=0) as server, httpx.Client(base_url=server.url) as client:
        for route, body, content_type, code, kind, field in BAD_BODIES:
            typed = {} if content_type is None else {"Content-Type": content_type}
            method, path = route.split()
            answer = client.request(method, path, content=body, headers=typed)
            error = answer.json()["error"]
            assert (answer.status_code, error["type"]) == (400, code), (body, error)
            if kind is not None:
                assert (error["kind"], error["field"]) == (kind, field), error
                assert error["message"].startswith(f"{route}: {field}: expected " if field else f"{route}: expected ")
        too_large = client.post("/_ssemock/stubs", content=b"#" * (MAX_STUB_FILE + 1))
        assert too_large.status_code == 413 and too_large.json()["error"]["limit"] == MAX_STUB_FILE
        assert client.get("/_ssemock/stubs").json() == []
        assert client.get("/_ssemock/scenario").json() == {"scenario": [], "added": []}


def test_a_request_from_another_origin_changes_nothing(tmp_path: Path) -> None:
    with serve(tmp_path) as served, httpx.Client(base_url=served.url) as client:
        foreign = {"Origin": "http://127.0.0.1:1", "Content-Type": "text/plain"}  # another port: another origin
        for method, path, body in (
            ("POST", "stubs", WEATHER),
            ("DELETE", "stubs", ""),
            ("PUT", "scenario", "crlf"),
            ("DELETE", "scenario", ""),
        ):
            answer = client.request(method, f"/_ssemock/{path}", content=body, headers=foreign)
            assert (answer.status_code, answer.json()["error"]["type"]) == (403, "ssemock_cross_origin")
        fetched = {"Sec-Fetch-Site": "cross-site"}
        assert client.post("/_ssemock/stubs", content=WEATHER, headers=fetched).status_code == 403
        assert client.get("/_ssemock/stubs").json() == []
        assert client.get("/_ssemock/scenario").json() == {"scenario": [], "added": []}


def large_stub_file() -> str:
    """A stub file just under :data:`MAX_STUB_FILE` bytes, of thousands of small stubs (fewer than 10,000)."""
    stub = "  - name: s{0}\n    match: {{contains: word{0}}}\n    reply: {{text: the answer to question {0} in full}}\n"
    head = "ssemock_stubs: 1\nstubs:\n"
    count = (MAX_STUB_FILE - len(head)) // len(stub.format(99999))
    text = head + "".join(stub.format(i) for i in range(count))
    assert MAX_STUB_FILE * 0.9 < len(text.encode()) <= MAX_STUB_FILE
    return text


def test_the_server_answers_while_it_reads_a_large_document() -> None:
    """Reading and checking 1 MiB of YAML takes seconds: a thread does it, and the server answers meanwhile (were
    it read on the event loop, no request would be answered from its arrival to its answer)."""
    with MockServer([], timing_scale=0) as server, httpx.Client(base_url=server.url) as client:
        with ThreadPoolExecutor(1) as pool:
            posted = pool.submit(httpx.post, f"{server.url}/_ssemock/stubs", content=large_stub_file(), timeout=120)
            meanwhile = 0  # requests answered while the document was being read
            while not posted.done():
                assert client.get("/_ssemock/health").status_code == 200
                meanwhile += not posted.done()
        assert posted.result().status_code == 200 and len(server.stubs) > 5000
        assert meanwhile >= 20, meanwhile


def test_mockserver_adds_lists_and_clears_stubs_and_sets_the_scenario() -> None:
    with MockServer([], timing_scale=0) as server:
        assert server.add_stubs(WEATHER) == ["weather"]
        assert server.add_stubs({"ssemock_stubs": 1, "stubs": [{"name": "hi", "reply": {"text": "Hello"}}]}) == ["hi"]
        assert chat(server.url, "weather?") == "Hello"  # the latest addition first
        assert [(s["name"], s["used"], s["added"]) for s in server.stubs] == [("hi", 1, True), ("weather", 0, True)]
        assert server.set_scenario({"name": "limited", "steps": [{"http-error": {"status": 429}}]}) == ("limited",)
        with (
            openai.OpenAI(base_url=server.url + "/v1", api_key="k", max_retries=0) as client,
            pytest.raises(openai.RateLimitError),
        ):
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
        assert server.set_scenario("crlf") == ("crlf",) == server.scenario
        server.clear_scenario()
        assert server.scenario == () and "limited" not in server.state.scenarios
        assert server.clear_stubs() == 2 and server.stubs == []


def test_the_fixture_adds_stubs_and_a_scenario_for_one_test_only(pytester: pytest.Pytester) -> None:
    pytester.makeini(INI)
    pytester.makepyfile(
        test_runtime="""
        import httpx
        import openai
        import pytest

        DOCUMENT = {"name": "limited", "steps": [{"http-error": {"status": 429}}]}

        def test_adds(ssemock):
            assert ssemock.add_stubs("ssemock_stubs: 1\\nstubs: [{name: hi, reply: {text: Hello}}]\\n") == ["hi"]
            with openai.OpenAI(base_url=ssemock.url + "/v1", api_key="k", max_retries=0) as client:
                answer = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
                assert answer.choices[0].message.content == "Hello"
                assert ssemock.set_scenario(DOCUMENT) == ("limited",)
                with pytest.raises(openai.RateLimitError):
                    client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])

        def test_chaos(ssemock):
            assert ssemock.set_chaos("http-500=1") == ["http-500=1.0"]
            ssemock.reply("Hello", times=None)  # the faulted request counts as one answer
            with openai.OpenAI(base_url=ssemock.url + "/v1", api_key="k", max_retries=0) as client:
                with pytest.raises(openai.InternalServerError):
                    client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
                ssemock.clear_chaos()
                answer = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
                assert answer.choices[0].message.content == "Hello"

        def test_next(ssemock):  # the same server: what the tests before added is gone
            assert httpx.get(ssemock.url + "/_ssemock/chaos").json()["chaos"] == []
            assert "limited" not in [s["name"] for s in httpx.get(ssemock.url + "/_ssemock/scenarios").json()]
            assert httpx.get(ssemock.url + "/_ssemock/scenario").json() == {"scenario": [], "added": []}
            assert httpx.get(ssemock.url + "/_ssemock/stubs").json() == []
        """
    )
    result = pytester.runpytest("-p", "no:randomly")
    result.assert_outcomes(passed=3)


def test_under_two_workers_a_change_reaches_both_or_names_the_one_that_did_not(tmp_path: Path) -> None:
    (tmp_path / "none").mkdir()
    with serve(tmp_path, "--workers", "2", "--cassettes", str(tmp_path / "none")) as served:
        workers = served.workers()
        assert len(workers) == 2
        added = httpx.post(f"{served.url}/_ssemock/stubs", content=WEATHER).json()
        assert added == {
            "added": 1,
            "stubs": ["weather"],
            "unanswered": [],
            "workers": {str(w): {"added": 1, "stubs": ["weather"]} for w in workers},
        }
        answered = _until_both_answer(served.url, workers, "weather?")
        assert set(answered) == {(w, "weather", 200) for w in workers}
        # a document near the 1 MiB bound takes seconds to read, in each worker: each gets the time it needs
        big = large_stub_file()
        taken = httpx.post(f"{served.url}/_ssemock/stubs", content=big, timeout=120).json()
        assert sorted(taken["workers"]) == sorted(map(str, workers)) and taken["unanswered"] == []
        assert {answer["added"] for answer in taken["workers"].values()} == {big.count("- name:")}
        assert httpx.delete(f"{served.url}/_ssemock/stubs").json()["workers"] == {
            str(w): {"cleared": 1 + big.count("- name:")} for w in workers
        }
        httpx.post(f"{served.url}/_ssemock/stubs", content=WEATHER).raise_for_status()

        stuck, live = workers
        os.kill(stuck, signal.SIGSTOP)  # its event loop does not run, as if held by a long computation
        try:
            started = time.monotonic()
            late = """ssemock_stubs: 1\nstubs: [{name: late, match: {contains: weather}, reply: {text: Late}}]\n"""
            answer = httpx.post(f"{served.url}/_ssemock/stubs", content=late, timeout=30)
            assert time.monotonic() - started <= PEER_TIMEOUT + 2.0
            error = answer.json()["error"]
            assert (answer.status_code, error["type"]) == (503, "ssemock_change_incomplete")
            assert (error["unanswered"], error["refused"]) == ([stuck], {})
            assert error["workers"] == {str(live): {"added": 1, "stubs": ["late"]}}
            assert f"worker(s) {stuck} did not answer POST /_ssemock/stubs" in (tmp_path / "stderr").read_text()
        finally:
            os.kill(stuck, signal.SIGCONT)
        # the stuck worker read the change after the asker gave up on it: it did not apply it
        answered = _until_both_answer(served.url, workers, "weather?")
        assert {(w, stub) for w, stub, _ in answered} == {(stuck, "weather"), (live, "late")}
        cleared = httpx.delete(f"{served.url}/_ssemock/stubs").json()
        assert cleared["workers"] == {str(stuck): {"cleared": 1}, str(live): {"cleared": 2}}

        # a worker gunicorn starts in place of one that died serves the files alone, and says so
        httpx.post(f"{served.url}/_ssemock/stubs", content=WEATHER).raise_for_status()
        os.kill(live, signal.SIGKILL)
        deadline = time.monotonic() + 30
        while not set(served.workers()) - {stuck, live} and time.monotonic() < deadline:
            time.sleep(0.05)
        [new] = set(served.workers()) - {stuck, live}
        answered = _until_both_answer(served.url, [stuck, new], "weather?")
        assert answered == {(stuck, "weather", 200), (new, None, 404)}
        assert f"worker {new} started after changes at run time" in (tmp_path / "stderr").read_text()


def test_under_two_workers_changes_sent_at_once_end_the_same_in_both(tmp_path: Path) -> None:
    """200 scenario changes sent together, through both workers, are made in one order: afterwards each
    worker serves the same scenario (the journal names the worker and the scenario of each answer)."""
    (tmp_path / "none").mkdir()
    with serve(tmp_path, "--workers", "2", "--cassettes", str(tmp_path / "none")) as served:
        workers = served.workers()
        httpx.post(f"{served.url}/_ssemock/stubs", content=WEATHER).raise_for_status()

        def change(n: int) -> httpx.Response:
            with httpx.Client(base_url=served.url, headers={"Connection": "close"}, timeout=60) as client:
                if n % 3 == 2:
                    return client.delete("/_ssemock/scenario")
                return client.put("/_ssemock/scenario", content=("crlf", "split-bytes")[n % 3])

        with ThreadPoolExecutor(16) as pool:
            answers = list(pool.map(change, range(200)))
        assert [a.status_code for a in answers] == [200] * 200
        assert all(sorted(a.json()["workers"]) == sorted(map(str, workers)) for a in answers)
        answered = _until_both_answer(served.url, workers, "weather?")
        scenarios = {(w, scenario) for w, scenario, _ in _journal_scenarios(served.url)}
        assert {w for w, _, _ in answered} == {w for w, _ in scenarios} == set(workers)
        assert len({scenario for _, scenario in scenarios}) == 1, scenarios


def test_a_change_waits_for_the_one_before_it_and_is_refused_after_the_bound(tmp_path: Path) -> None:
    """The change lock is a flock(2) of the workers' directory: a change waits while it is held, goes on once
    it is free, and is ``ChangeBusyError`` (503 ``ssemock_change_busy``) after ``wait`` seconds."""
    import asyncio
    import fcntl

    from ssemock.change_lock import LOCK_FILE, hold_change_lock
    from ssemock.refusals import ChangeBusyError

    async def scenario() -> list[str]:
        done: list[str] = []
        with open(tmp_path / LOCK_FILE, "ab") as other:  # another worker holds it
            fcntl.flock(other, fcntl.LOCK_EX)
            with pytest.raises(ChangeBusyError) as busy:
                async with hold_change_lock(tmp_path, "PUT /_ssemock/scenario", wait=0.2):
                    done.append("made while held")
            assert (busy.value.status, busy.value.code, busy.value.wait) == (503, "ssemock_change_busy", 0.2)
            assert str(busy.value).startswith("PUT /_ssemock/scenario: waited 0.2 s")

            async def waiter() -> None:
                async with hold_change_lock(tmp_path, "DELETE /_ssemock/scenario", wait=10):
                    done.append("after release")

            task = asyncio.create_task(waiter())
            await asyncio.sleep(0.1)
            done.append("released")
            fcntl.flock(other, fcntl.LOCK_UN)
            await task
        return done

    assert asyncio.run(scenario()) == ["released", "after release"]


def test_the_changes_one_worker_receives_at_once_are_made_in_the_order_they_came(tmp_path: Path) -> None:
    """300 changes at once in one worker while another worker holds the lock: with the worker's queue they
    wait in the order they came, so none waits past its bound behind later ones (1,000 at once over two
    workers were 80 % ``ssemock_change_busy`` when each polled the file)."""
    import asyncio
    import fcntl

    from ssemock.change_lock import LOCK_FILE, hold_change_lock

    async def scenario() -> list[int]:
        queue, order = asyncio.Lock(), list[int]()

        async def change(n: int) -> None:
            async with hold_change_lock(tmp_path, f"change {n}", wait=20, queue=queue):
                order.append(n)
                await asyncio.sleep(0.001)

        with open(tmp_path / LOCK_FILE, "ab") as other:
            fcntl.flock(other, fcntl.LOCK_EX)
            tasks = []
            for n in range(300):
                tasks.append(asyncio.create_task(change(n)))
                await asyncio.sleep(0)  # each change comes after the one before it
            await asyncio.sleep(0.1)
            fcntl.flock(other, fcntl.LOCK_UN)
        await asyncio.gather(*tasks)
        return order

    assert asyncio.run(scenario()) == list(range(300))


def _journal_scenarios(url: str) -> set[tuple[int, Any, int]]:
    return {(e["worker"], e["scenario"], e["status"]) for e in httpx.get(f"{url}/_ssemock/requests").json()}


def _until_both_answer(url: str, workers: list[int], prompt: str) -> set[tuple[int, Any, int]]:
    """Chat requests, each on a new connection, until both workers answered one since the journal was cleared:
    each answer's (worker, stub, status)."""
    httpx.delete(f"{url}/_ssemock/requests")
    for _ in range(200):
        with httpx.Client(headers={"Connection": "close"}) as client:
            client.post(
                f"{url}/v1/chat/completions",
                json={"model": "gpt-4o", "messages": [{"role": "user", "content": prompt}]},
            )
        journal = httpx.get(f"{url}/_ssemock/requests").json()
        if set(Counter(e["worker"] for e in journal)) == set(workers):
            return {(e["worker"], e["stub"], e["status"]) for e in journal}
    raise AssertionError(f"not every worker answered: {journal}")


def test_the_faults_by_rate_set_over_http_apply_to_the_next_requests_then_cleared(tmp_path: Path) -> None:
    cassette = collect_cassettes(None)[RECORDED]
    inter = cassette.interactions[0]

    def replay(client: httpx.Client) -> httpx.Response:
        return client.request(inter.request.method, inter.request.path, content=inter.request.body,
                              headers={"X-SSEMock-Cassette": RECORDED})

    with serve(tmp_path, "--timing-scale", "0", "--seed", "3") as served, httpx.Client(base_url=served.url) as client:
        assert client.get("/_ssemock/chaos").json() == {"chaos": [], "seed": 3}
        assert replay(client).content == inter.response.body
        # rate 1: every request draws the 429 preset (its provider's error body, status 429)
        put = client.put("/_ssemock/chaos", content="http-429=1")
        assert (put.status_code, put.json()) == (200, {"chaos": ["http-429=1.0"]})
        assert replay(client).status_code == 429
        entry = client.get("/_ssemock/requests").json()[-1]
        assert (entry["status"], entry["fault"]) == (429, "http-429") and 0 <= entry["draw"] < 1
        deadline = time.monotonic() + 10  # the access line is written when the answer has ended
        while "; fault http-429 by chance" not in (tmp_path / "stderr").read_text() and time.monotonic() < deadline:
            time.sleep(0.05)
        logged = (tmp_path / "stderr").read_text()
        assert f"POST {inter.request.path} -> 429 complete" in logged
        assert f"; cassette {RECORDED} #0; fault http-429 by chance; from 127.0.0.1" in logged
        # a mapping as JSON; rate 0: never drawn, the recording is sent as recorded
        put = client.put("/_ssemock/chaos", json={"cut-mid-event": 0})
        assert put.json() == {"chaos": ["cut-mid-event=0.0"]}
        assert replay(client).content == inter.response.body
        for body, said in (("http-429=1.5", "from 0 to 1"), ("no-such-scenario=0.1", "no scenario named"),
                           ("http-429=0.7,http-500=0.7", "at most 1"), ("[http-429=0.1", "valid YAML"),
                           ("5", "expected rules such as"), ("{http-500: 1" + "0" * 400 + "}", "from 0 to 1"),
                           ('{"provider=anthropic:http-429": 0.2}', "the keys of a mapping are scenario names")):
            refused = client.put("/_ssemock/chaos", content=body)
            error = refused.json()["error"]
            assert (refused.status_code, error["type"]) == (400, "ssemock_invalid_change"), error
            assert error["kind"] == "chaos", error
            assert said in error["message"], error["message"]
        assert client.get("/_ssemock/chaos").json()["chaos"] == ["cut-mid-event=0.0"]  # unchanged
        foreign = client.put("/_ssemock/chaos", content="http-429=1", headers={"Origin": "http://127.0.0.1:1"})
        assert foreign.status_code == 403 and client.get("/_ssemock/chaos").json()["chaos"] == ["cut-mid-event=0.0"]
        assert client.delete("/_ssemock/chaos").json() == {"chaos": []}
        assert replay(client).content == inter.response.body


def test_mockserver_sets_and_clears_the_faults_by_rate() -> None:
    with MockServer(timing_scale=0) as server, httpx.Client(base_url=server.url) as client:
        inter = server.state.cassettes[RECORDED].interactions[0]
        assert server.set_chaos({"http-500": 1}) == ["http-500=1.0"]
        answer = client.post(inter.request.path, content=inter.request.body, headers={"X-SSEMock-Cassette": RECORDED})
        assert answer.status_code == 500 and server.requests[-1]["fault"] == "http-500"
        with pytest.raises(ChaosError, match="no scenario named") as refused:
            server.set_chaos("nothing-like-it=0.5")
        assert isinstance(refused.value, ScenarioError) and refused.value.kind == "chaos"
        server.clear_chaos()
        answer = client.post(inter.request.path, content=inter.request.body, headers={"X-SSEMock-Cassette": RECORDED})
        assert answer.content == inter.response.body


def test_under_two_workers_the_faults_by_rate_reach_both(tmp_path: Path) -> None:
    with serve(tmp_path, "--workers", "2", "--timing-scale", "0") as served:
        workers = served.workers()
        put = httpx.put(f"{served.url}/_ssemock/chaos", content="http-429=1").json()
        assert put == {"chaos": ["http-429=1.0"], "unanswered": [],
                       "workers": {str(w): {"chaos": ["http-429=1.0"]} for w in workers}}
        cleared = httpx.delete(f"{served.url}/_ssemock/chaos").json()
        assert cleared["workers"] == {str(w): {"chaos": []} for w in workers}


def test_under_two_workers_a_change_of_non_ascii_text_within_the_bound_reaches_both(tmp_path: Path) -> None:
    """A scenario document of 600 KB (under the 1 MiB bound) whose description is 300,000 "é": JSON writes each
    as ``\\u00e9`` when one worker hands the change to the other, 1.8 MB, and both take it."""
    (tmp_path / "none").mkdir()
    document = ("ssemock_scenario: 1\nname: wide\ndescription: '" + "é" * 300_000
                + "'\nsteps:\n- line-endings: {eol: crlf}\n").encode()
    with serve(tmp_path, "--workers", "2", "--cassettes", str(tmp_path / "none")) as served:
        workers = served.workers()
        answer = httpx.put(f"{served.url}/_ssemock/scenario", content=document, timeout=60)
        assert answer.status_code == 200, answer.text
        assert answer.json()["workers"] == {str(w): {"scenario": ["wide"]} for w in workers}
