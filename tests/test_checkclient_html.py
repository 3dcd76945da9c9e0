"""check-client's HTML page (``--html``), from real runs of client processes: read back with the
standard library's HTML parser and held against the JSON report of the same run."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import yaml

from .checkclients import ROOT, check_client

CASSETTE = "openai-chat-finish-length-usage"

# Counts a CR LF as two line ends (WHATWG: CR LF is one line end), so each line of an event ends with
# an empty line: an event of several data lines is dispatched in pieces.
CRLF_TWICE = """
import json, os, urllib.request
from ssemock.sse import decode
body_file = os.environ.get("SSEMOCK_BODY_FILE")
request = urllib.request.Request(os.environ["SSEMOCK_STREAM_URL"], method=os.environ["SSEMOCK_METHOD"],
                                 data=open(body_file, "rb").read() if body_file else None)
body = urllib.request.urlopen(request, timeout=5).read()
for event in decode(body.replace(b"\\r\\n", b"\\n\\n")):
    print(json.dumps({"type": event.type, "data": event.data, "id": event.last_event_id}))
"""

# Prints one event of its own whatever it is sent: its event type is markup, quoted by the clean case's reason.
HOSTILE = """
import json
print(json.dumps({"type": "<script>alert(1)</script>", "data": "x"}))
"""

_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


@dataclass
class Node:
    tag: str
    attrs: dict[str, str | None]
    children: list[Any] = field(default_factory=list)  # Node or str

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def walk(self) -> list[Node]:
        return [self, *(n for c in self.children if isinstance(c, Node) for n in c.walk())]

    def find(self, tag: str, cls: str | None = None, **attrs: str) -> list[Node]:
        return [
            n
            for n in self.walk()
            if n.tag == tag
            and (cls is None or cls in (n.attrs.get("class") or "").split())
            and all(n.attrs.get(k) == v for k, v in attrs.items())
        ]

    def one(self, tag: str, cls: str | None = None, **attrs: str) -> Node:
        (found,) = self.find(tag, cls, **attrs)
        return found


class TreeBuilder(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.root = Node("#document", {})
        self.open = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, dict(attrs))
        self.open[-1].children.append(node)
        if tag not in _VOID:
            self.open.append(node)

    def handle_endtag(self, tag: str) -> None:
        assert self.open[-1].tag == tag, f"</{tag}> closes <{self.open[-1].tag}>"
        self.open.pop()

    def handle_data(self, data: str) -> None:
        self.open[-1].children.append(data)


def parse_page(path: Path) -> Node:
    builder = TreeBuilder()
    builder.feed(path.read_text(encoding="utf-8"))
    builder.close()
    assert builder.open == [builder.root], "every element is closed"
    return builder.root


def assert_self_contained(page: Node) -> None:
    """Nothing is loaded from elsewhere: no element refers to an http(s) or protocol-relative URL, no
    script, no style sheet, image or frame element, and the inline styles import nothing."""
    for node in page.walk():
        for name, value in node.attrs.items():
            if name in ("src", "href", "action", "srcset", "poster", "data", "formaction", "cite", "background"):
                assert not re.match(r"\s*(https?:|//)", value or "", re.I), f"<{node.tag} {name}={value!r}>"
    assert not [n.tag for n in page.walk() if n.tag in ("script", "link", "img", "iframe", "object", "embed")]
    for style in page.find("style"):
        assert not re.search(r"url\(|@import", style.text(), re.I)


def rows(page: Node) -> list[tuple[str, ...]]:
    cells = ("case", "category", "grade", "reason")
    return [tuple(row.one("td", cls).text() for cls in cells) for row in page.find("tr", "case")]


def test_the_page_shows_the_json_reports_grades_and_each_failure(tmp_path) -> None:
    client = tmp_path / "crlf_twice.py"
    client.write_text(CRLF_TWICE)
    page_file = tmp_path / "report.html"
    done, report = check_client(
        tmp_path,
        "--cassette",
        CASSETTE,
        "--scenario",
        "split-crlf-multiline,crlf,truncate",
        "--html",
        str(page_file),
        command=[sys.executable, str(client)],
    )
    assert done.returncode == 1, done.stdout + done.stderr
    page = parse_page(page_file)
    assert_self_contained(page)
    cases = report["cases"]
    assert rows(page) == [(c["case"], c["category"], c["verdict"].upper(), c["reason"]) for c in cases]
    # one data line per event: the doubled line ends only add blank lines; the JSON split over 3 lines breaks
    assert {c["scenario"] or "clean": c["verdict"] for c in cases} == {
        "clean": "pass",
        "split-crlf-multiline": "fail",
        "crlf": "pass",
        "truncate": "n/a",  # an SSE-level reader accepts a stream that ends cleanly
    }
    assert rows(page)[3][2] == "N/A"
    for category in ("conformance", "resilience", "all"):
        counted = [c["verdict"] for c in cases if category in ("all", c["category"])]
        shown = [td.text() for td in page.one("tr", id=f"category-{category}").find("td", "count")]
        assert shown == [str(counted.count(v)) for v in ("pass", "fail", "n/a")]
    assert page.one("p", "result").text() == "FAIL: 1 of 4 case(s) failed"
    (failed,) = [(n, c) for n, c in enumerate(cases, 1) if c["verdict"] == "fail"]
    number, case = failed
    section = page.one("section", "failure", id=f"failure-{number}")
    assert section.one("span", "case").text() == case["case"]
    assert section.one("pre", "difference").text() == case["reason"]
    assert section.one("pre", "reproduce").text() == case["reproduce"]
    assert page.one("tr", id=f"case-{number}").one("a").attrs["href"] == f"#failure-{number}"
    shrunk_file = tmp_path / "shrunk.yaml"
    shrunk_file.write_text(section.one("pre", "shrunk").text())
    shrunk = yaml.safe_load(shrunk_file.read_text())
    # the fewest steps that still fail: data over several lines, and CR LF line ends
    assert [next(iter(step)) for step in shrunk["steps"]] == ["multiline-data", "line-endings"]
    assert shrunk["steps"][1]["line-endings"]["eol"] == "crlf"
    assert [f"- {yaml.safe_dump(s, default_flow_style=True).strip()[1:-1]}" for s in shrunk["steps"]] == (
        case["shrunk"].splitlines()[1:]
    )
    checked = subprocess.run(
        [sys.executable, "-m", "ssemock", "scenarios", "check", str(shrunk_file)],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=False,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_the_clients_output_is_escaped(tmp_path) -> None:
    client = tmp_path / "hostile.py"
    client.write_text(HOSTILE)
    page_file = tmp_path / "report.html"
    done, report = check_client(
        tmp_path,
        "--cassette",
        CASSETTE,
        "--scenario",
        "crlf",
        "--html",
        str(page_file),
        command=[sys.executable, str(client)],
    )
    assert done.returncode == 1, done.stdout + done.stderr
    clean, crlf = report["cases"]
    assert clean["reason"] == "event 1 of 5: type '<script>alert(1)</script>', expected 'message'"
    assert crlf["reason"] == clean["reason"]  # CR LF line ends: the same events
    page = parse_page(page_file)
    assert_self_contained(page)
    assert not page.find("script")
    assert rows(page) == [(c["case"], c["category"], c["verdict"].upper(), c["reason"]) for c in report["cases"]]
    assert [pre.text() for pre in page.find("pre", "difference")] == [clean["reason"], crlf["reason"]]
    assert "<script>" not in page_file.read_text(encoding="utf-8")


def test_jinja2_is_imported_only_for_the_page() -> None:
    code = "import sys, ssemock, ssemock.cli, ssemock.checkclient.cli; print('jinja2' in sys.modules)"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env)
    assert done.stdout.strip() == "False", done.stderr
