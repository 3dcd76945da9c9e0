"""The README's core promises: its Python example runs, and CI runs its test command as written."""

from __future__ import annotations

import json
import re
from pathlib import Path

from ssemock import Limits, MockServer, NetworkOptions
from ssemock.mockserver import collect_cassettes
from ssemock.sse import Event, decode

ROOT = Path(__file__).parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def section(title: str) -> str:
    start = README.index(f"\n## {title}\n")
    end = README.find("\n## ", start + 1)
    return README[start : end if end != -1 else len(README)]


def blocks(text: str, lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", text, re.S)


def test_the_python_example_runs() -> None:
    (code,) = blocks(section("Using it from Python"), "python")
    exec(compile(code, "README.md", "exec"), {})


def test_ci_runs_the_readme_test_command_as_written() -> None:
    commands = blocks(README[: README.index("\n## ")], "sh")
    test_command = commands[1].strip()
    assert "pytest" in test_command
    assert test_command in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()


def test_the_mockserver_signature_is_the_code_s() -> None:
    """Every parameter of ``MockServer``, with its default, as the README writes it (a new option shows up)."""
    import ast
    import inspect

    written = re.search(r"`MockServer\((.*?)\)`:", section("Using it from Python"), re.S)
    assert written is not None
    call = ast.parse(f"f({written.group(1).replace(chr(10), ' ').replace('*, ', '')})", mode="eval").body
    assert isinstance(call, ast.Call)
    records = {"Limits": Limits, "NetworkOptions": NetworkOptions}  # a record's default: its call, no arguments
    readme = {k.arg: records[k.value.func.id]() if isinstance(k.value, ast.Call) and isinstance(k.value.func, ast.Name)
              else ast.literal_eval(k.value) for k in call.keywords}
    params = inspect.signature(MockServer).parameters
    code = {name: p.default for name, p in params.items() if p.kind is not inspect.Parameter.VAR_KEYWORD}
    assert readme.keys() == code.keys()
    assert {k: tuple(v) if isinstance(v, (list, tuple)) else v for k, v in readme.items()} == \
        {k: tuple(v) if isinstance(v, (list, tuple)) else v for k, v in code.items()}
    assert [n for n, p in params.items() if p.kind is inspect.Parameter.KEYWORD_ONLY] == list(code)[1:]


def test_the_readme_names_the_mcp_recording_s_protocol_version() -> None:
    """The version the README says MCP clients must accept is the one the bundled recording's server answered,
    and the installed ``mcp`` SDK negotiates it (``tests/test_resume.py`` runs that client on the recording)."""
    from mcp.types.version import HANDSHAKE_PROTOCOL_VERSIONS

    cassette = collect_cassettes(None)["mcp-deepwiki-ping-comments-crlf"]
    answers = [json.loads(e.data) for i in cassette.interactions for e in decode(i.response.body)
               if isinstance(e, Event) and e.data.startswith("{")]
    versions = {a["result"]["protocolVersion"] for a in answers if "protocolVersion" in a.get("result", {})}
    assert versions == {"2025-11-25"}
    said = re.search(r"MCP recording's `initialize` answer is protocol version `([^`]+)`", section("What is bundled"))
    assert said is not None and {said.group(1)} == versions
    assert said.group(1) in HANDSHAKE_PROTOCOL_VERSIONS
