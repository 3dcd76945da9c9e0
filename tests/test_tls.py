"""Replay over https: ``MockServer(tls=True)`` and ``ssemock serve --tls`` answer over TLS with a
certificate of ssemock's local authority, which clients trust through ``SSL_CERT_FILE`` (no code change);
the bytes are those of the plain http replay. Real servers on 127.0.0.1, read by httpx, the openai SDK
in its own process and Python's ssl."""

from __future__ import annotations

import os
import shutil
import socket
import ssl
import stat
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from ssemock import ConfigError, MockServer
from ssemock.sse import decode
from ssemock.tls import TLSFiles, local_authority, trust_env

from .sessions import INI

pytest_plugins = ["pytester"]

NAME = "openai-chat-tool-calls-usage"


@pytest.fixture
def tls_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache" / "ssemock" / "tls"


def _ask(server: MockServer, **client: object) -> bytes:
    request = server.state.cassettes[NAME].interactions[0].request
    with httpx.Client(timeout=20, **client) as http:  # type: ignore[arg-type]
        answer = http.post(
            server.url + request.path, content=request.body, headers={"Content-Type": "application/json"}
        )
    assert answer.status_code == 200
    return answer.content


def test_the_https_replay_sends_the_bytes_of_the_http_one(tls_dir: Path) -> None:
    with MockServer(scenarios=[], timing_scale=0) as plain:
        expected = _ask(plain)
    with MockServer(scenarios=[], timing_scale=0, tls=True) as server:
        assert server.url.startswith("https://127.0.0.1:")
        assert server.tls is not None and server.tls.ca == tls_dir / "ca.pem"
        got = _ask(server, verify=ssl.create_default_context(cafile=str(server.tls.ca)))
        with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
            _ask(server)  # the system's authorities do not know it
    assert got == expected and decode(got) == decode(expected)
    assert stat.S_IMODE(os.stat(tls_dir / "server-key.pem").st_mode) == 0o600
    assert sorted(p.name for p in tls_dir.iterdir()) == [".lock", "ca.pem", "server-key.pem", "server.pem"]  # no CA key


def test_processes_making_the_authority_at_once_agree_on_one(tls_dir: Path) -> None:
    script = "from ssemock.tls import local_authority, server_context; server_context(local_authority())"
    env = {**os.environ, "XDG_CACHE_HOME": str(tls_dir.parent.parent)}
    runs = [subprocess.Popen([sys.executable, "-c", script], env=env, stderr=subprocess.PIPE) for _ in range(6)]
    assert [run.wait(timeout=120) for run in runs] == [0] * 6, [run.stderr.read() for run in runs if run.stderr]
    for run in runs:
        run.stderr.close() if run.stderr else None
    files = local_authority()
    with MockServer(scenarios=[], tls=files) as server:
        trusted = ssl.create_default_context(cafile=str(files.ca))
        assert httpx.get(server.url + "/_ssemock/health", verify=trusted, timeout=10).status_code == 200


def test_the_certificate_names_localhost_and_both_loopback_addresses(tls_dir: Path) -> None:
    files = local_authority()
    context = ssl.create_default_context(cafile=str(files.ca))
    with MockServer(scenarios=[], tls=files) as server:
        for host in ("localhost", "127.0.0.1"):
            with (
                socket.create_connection(("127.0.0.1", server.port), timeout=10) as raw,
                context.wrap_socket(raw, server_hostname=host) as tls,
            ):
                assert tls.version() in ("TLSv1.2", "TLSv1.3") and tls.selected_alpn_protocol() in (None, "http/1.1")
    assert local_authority() == files and (tls_dir / "ca.pem").read_bytes() == files.ca.read_bytes()  # kept


def test_the_openai_sdk_trusts_it_from_the_environment_alone(tls_dir: Path) -> None:
    script = (
        "import openai, sys\n"
        "client = openai.OpenAI(base_url=sys.argv[1] + '/v1', api_key='sk-test', max_retries=0)\n"
        "stream = client.chat.completions.create(model='gpt-4o-mini', stream=True,\n"
        "    messages=[{'role': 'user', 'content': 'What is the weather in Paris and in Tokyo?'}])\n"
        "print(sum(1 for _ in stream))\n"
    )
    cassette = MockServer(scenarios=[]).state.cassettes[NAME]
    with MockServer([cassette], scenarios=[], timing_scale=0, match_on=("method", "path"), tls=True) as server:
        assert server.tls is not None
        env = {**os.environ, **trust_env(server.tls)}
        done = subprocess.run(
            [sys.executable, "-c", script, server.url], capture_output=True, text=True, timeout=120, env=env
        )
    assert done.returncode == 0, done.stderr[-2000:]
    events = [e for e in decode(cassette.interactions[0].response.body) if e.data != "[DONE]"]
    assert int(done.stdout) == len(events)  # one chunk object per recorded event


def test_serve_tls_prints_the_authority_to_trust(tls_dir: Path) -> None:
    env = {**os.environ, "XDG_CACHE_HOME": str(tls_dir.parent.parent)}
    process = subprocess.Popen(
        [sys.executable, "-m", "ssemock", "serve", "--port", "0", "--tls"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert process.stdout is not None and process.stderr is not None
        url = process.stdout.readline().split()[-1]
        lines = [process.stderr.readline() for _ in range(2)]
        health = httpx.get(
            url + "/_ssemock/health", verify=ssl.create_default_context(cafile=str(tls_dir / "ca.pem")), timeout=10
        )
    finally:
        process.terminate()
        process.communicate(timeout=30)
    assert url.startswith("https://127.0.0.1:") and health.json()["status"] == "ok"
    assert f"TLS: clients trust {tls_dir / 'ca.pem'} (SSL_CERT_FILE={tls_dir / 'ca.pem'})\n" in lines


def test_a_certificate_of_your_own_or_a_broken_one(tmp_path: Path, tls_dir: Path) -> None:
    files = local_authority()
    own = TLSFiles(files.cert, files.key)  # as a user's own: no authority to print
    assert trust_env(own) == {}
    with MockServer(scenarios=[], tls=own) as server:
        trusted = ssl.create_default_context(cafile=str(files.ca))
        assert httpx.get(server.url + "/_ssemock/health", verify=trusted, timeout=10).status_code == 200
    (tmp_path / "bad.pem").write_text("not a certificate\n")
    with pytest.raises(
        ConfigError,
        match=r"bad\.pem, .*server-key\.pem: expected a PEM certificate chain and its "
        r"private key",
    ):
        MockServer(tls=TLSFiles(tmp_path / "bad.pem", files.key))
    with pytest.raises(ConfigError, match=r"missing\.pem: no such TLS certificate or key file"):
        MockServer(tls=TLSFiles(tmp_path / "missing.pem", files.key))
    done = subprocess.run(
        [sys.executable, "-m", "ssemock", "serve", "--port", "0", "--tls-cert", str(files.cert)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and done.stderr == "ssemock: error: serve: --tls-cert and --tls-key go together\n"


def test_the_recorder_accepts_https_clients_and_records_as_over_http(tls_dir: Path, tmp_path: Path) -> None:
    from ssemock.cassette import load
    from ssemock.recorder import Recorder

    from .upstream import SCRIPTS, Upstream

    script, _ = SCRIPTS["chat"]
    with Upstream() as up, Recorder(up.url, tmp_path / "out", tls=True, cassette="tls") as rec:
        assert rec.url.startswith("https://127.0.0.1:") and rec.tls is not None and rec.tls.ca is not None
        trusted = ssl.create_default_context(cafile=str(rec.tls.ca))
        answer = httpx.post(rec.url + "/stream/chat", json={}, verify=trusted, timeout=20)
    assert answer.status_code == 200 and answer.content == b"".join(data for _, data in script)
    [interaction] = load(tmp_path / "out" / "tls.yaml").interactions
    assert interaction.response.body == answer.content and interaction.request.path == "/stream/chat"


def test_the_fixture_serves_https_and_ssemock_env_names_the_authority(pytester: pytest.Pytester, tls_dir: Path) -> None:
    """``--ssemock-tls``: the session's fake provider is https, and ``ssemock_env`` sets ``SSL_CERT_FILE``,
    ``REQUESTS_CA_BUNDLE`` and ``NODE_EXTRA_CA_CERTS`` to the authority, so that the openai SDK (no argument
    but the environment) and Node.js's ``fetch`` (a new process) both read a stub's answer over TLS."""
    pytester.makeini(INI)
    pytester.makepyfile(
        test_env="""
        import os, subprocess
        import openai

        NODE = '''
            const answer = await fetch(process.env.OPENAI_BASE_URL + "/chat/completions", {method: "POST",
                headers: {"content-type": "application/json"},
                body: JSON.stringify({model: "m", messages: [{role: "user", content: "hi"}]})});
            console.log(answer.status, (await answer.json()).choices[0].message.content);
        '''

        def test_https(ssemock, ssemock_env):
            ssemock.reply("Hello over TLS", times=2)
            ca = os.path.join(os.environ["XDG_CACHE_HOME"], "ssemock", "tls", "ca.pem")
            assert ssemock.url.startswith("https://127.0.0.1:")
            assert ssemock_env["OPENAI_BASE_URL"] == ssemock.url + "/v1"
            assert {ssemock_env[n] for n in ("SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS")} == {ca}
            with openai.OpenAI(max_retries=0) as client:
                answer = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
            assert answer.choices[0].message.content == "Hello over TLS"
            node = subprocess.run(["node", "--input-type=module", "-e", NODE], capture_output=True, text=True,
                                  timeout=60)
            assert node.stdout == "200 Hello over TLS\\n", node.stderr
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:randomly", "--ssemock-tls")
    result.assert_outcomes(passed=1)


def test_a_key_that_others_may_read_is_made_again_with_the_whole_set(tls_dir: Path) -> None:
    first = local_authority()
    before = {name: (tls_dir / name).read_bytes() for name in ("ca.pem", "server.pem", "server-key.pem")}
    os.chmod(first.key, 0o644)  # copied with cp, or unpacked from an archive: others may have read it
    again = local_authority()
    assert again == first  # the same paths: SSL_CERT_FILE set earlier still names the authority
    assert stat.S_IMODE(os.stat(again.key).st_mode) == 0o600
    assert all((tls_dir / name).read_bytes() != data for name, data in before.items())  # a new authority, key
    with MockServer(scenarios=[], tls=True) as server:
        trusted = ssl.create_default_context(cafile=str(again.ca))
        assert httpx.get(server.url + "/_ssemock/health", verify=trusted, timeout=10).status_code == 200


def test_a_directory_given_as_a_certificate_is_named_as_one(tmp_path: Path, tls_dir: Path) -> None:
    files = local_authority()
    with pytest.raises(ConfigError, match=rf"^{tmp_path}: a directory, expected a TLS certificate or key file"):
        MockServer(tls=TLSFiles(tmp_path, files.key))
    with pytest.raises(ConfigError, match=rf"^{tmp_path}: a directory, expected a TLS certificate or key file"):
        MockServer(tls=TLSFiles(files.cert, tmp_path))


def _without_root_privileges() -> list[str]:
    """The command prefix that makes file permissions hold for this process's children: as root, the
    capabilities that read and write past them are dropped (util-linux setpriv); else none is needed."""
    if os.geteuid() != 0:
        return []
    return ["setpriv", "--bounding-set", "-dac_override,-dac_read_search", "--inh-caps=-dac_override,-dac_read_search"]


def test_an_unreadable_key_or_cache_directory_is_one_line_and_exit_2(tmp_path: Path, tls_dir: Path) -> None:
    files = local_authority()
    key = tmp_path / "key.pem"
    key.write_bytes(files.key.read_bytes())
    key.chmod(0)
    unreadable = tmp_path / "unreadable"
    shutil.copytree(tls_dir, unreadable / "ssemock" / "tls")
    (unreadable / "ssemock" / "tls").chmod(0)
    runs = [
        (["--tls-cert", str(files.cert), "--tls-key", str(key)], {},
         f"{key}: cannot read this TLS certificate or key file: Permission denied"),
        (["--tls"], {"XDG_CACHE_HOME": str(unreadable)},
         f"cannot write the local TLS authority's files to {unreadable / 'ssemock' / 'tls'}: Permission denied"),
    ]  # fmt: skip
    try:
        for args, env, message in runs:
            done = subprocess.run(
                [*_without_root_privileges(), sys.executable, "-m", "ssemock", "serve", "--port", "0", *args],
                capture_output=True, text=True, timeout=60, env={**os.environ, **env},
            )  # fmt: skip
            assert (done.returncode, done.stderr) == (2, f"ssemock: error: serve: {message}\n")
    finally:
        (unreadable / "ssemock" / "tls").chmod(0o700)


def test_a_directory_that_others_may_write_to_gets_a_new_authority_and_mode_0700(tls_dir: Path) -> None:
    first = local_authority()
    ca = first.ca
    assert ca is not None
    before = ca.read_bytes()
    os.chmod(tls_dir, 0o777)  # anyone could have put an authority of theirs in place of ca.pem
    again = local_authority()
    assert stat.S_IMODE(os.stat(tls_dir).st_mode) == 0o700
    assert again == first and ca.read_bytes() != before
    assert stat.S_IMODE(os.stat(again.key).st_mode) == 0o600


def test_a_relative_xdg_cache_home_is_ignored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # XDG Base Directory Specification: "If an implementation encounters a relative path in any of these
    # variables it should consider the path invalid and ignore it."
    monkeypatch.setenv("XDG_CACHE_HOME", "cache")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    files = local_authority()
    assert files.ca == tmp_path / "home" / ".cache" / "ssemock" / "tls" / "ca.pem" and files.ca.is_absolute()
    assert not (tmp_path / "cache").exists()
