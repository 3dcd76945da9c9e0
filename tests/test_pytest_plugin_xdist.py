"""The plugin under pytest-xdist: one fake provider per worker, each test with its own journal."""

from __future__ import annotations

import json

import pytest

from .sessions import INI

pytest_plugins = ["pytester"]


def test_two_workers_each_run_one_server(pytester: pytest.Pytester) -> None:
    pytester.makeini(INI)
    seen_dir = pytester.mkdir("seen")
    pytester.makepyfile(
        test_parallel=f"""
        import json
        import os
        import httpx
        import pytest

        @pytest.mark.ssemock(cassette="openai-chat-finish-length-usage")
        @pytest.mark.parametrize("n", range(8))
        def test_request(ssemock, worker_id, n):
            response = httpx.post(ssemock.url + "/v1/chat/completions", json={{"n": n}})
            assert response.status_code == 200
            [entry] = ssemock.assert_requests(count=1)
            assert entry["body"] == {{"n": n}}
            record = {{"worker": worker_id, "url": ssemock.url, "pid": os.getpid()}}
            with open(os.path.join({str(seen_dir)!r}, f"seen-{{n}}.json"), "w") as out:
                json.dump(record, out)
        """
    )
    result = pytester.runpytest_subprocess("-n", "2")
    result.assert_outcomes(passed=8)
    seen = [json.loads(p.read_text()) for p in seen_dir.glob("seen-*.json")]
    assert len(seen) == 8
    urls_by_worker: dict[str, set[str]] = {}
    for record in seen:
        urls_by_worker.setdefault(record["worker"], set()).add(record["url"])
    assert sorted(urls_by_worker) == ["gw0", "gw1"]
    assert all(len(urls) == 1 for urls in urls_by_worker.values())
    assert urls_by_worker["gw0"] != urls_by_worker["gw1"]
