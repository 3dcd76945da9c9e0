"""``ssemock inspect NAME --plot FILE``: the picture's content, read back from the SVG's elements and
metadata (and the PNG's text chunk), checked against the recording decoded by a WHATWG parser."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from PIL import Image

from ssemock.cli import main
from ssemock.mockserver import collect_cassettes
from ssemock.sse import Event, decode

from .docs_examples import page_blocks

ROOT = Path(__file__).parent.parent
DOCS = ROOT / "docs"
PAGE = "docs/how-to/compare-and-plot.md"  # the example of drawing a stream
THINKING = "anthropic-messages-thinking"
NS = {"svg": "http://www.w3.org/2000/svg", "dc": "http://purl.org/dc/elements/1.1/"}


def svg(path: Path) -> tuple[dict[str, ET.Element], dict[str, object]]:
    """The groups with an id, and the JSON of the Description metadata."""
    tree = ET.parse(path)
    groups = {g.get("id", ""): g for g in tree.iter(f"{{{NS['svg']}}}g")}
    description = tree.find(".//dc:description", NS)
    assert description is not None and description.text
    return groups, json.loads(description.text)


def recorded_events(name: str) -> list[Event]:
    body = collect_cassettes(None)[name].interactions[0].response.body
    return [e for e in decode(body) if isinstance(e, Event)]


def draw(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        status = main(["inspect", *argv])
    except SystemExit as exc:
        status = int(exc.code or 0)
    out = capsys.readouterr()
    return status, out.out, out.err


def test_the_picture_of_a_stream_under_a_scenario_shows_its_chunks_events_delays_and_cut(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "t.svg"
    status, printed, _ = draw(capsys, THINKING, "--plot", str(out), "--scenario", str(DOCS / "timeline-scenario.yaml"))
    assert status == 0 and printed.startswith(f"{out}: {THINKING} #0 under timeline-example")
    groups, data = svg(out)
    events = recorded_events(THINKING)
    # "disconnect: {inside_event: 13}" keeps the first 13 recorded events whole
    kept = [e.type for e in events[:13]]
    assert [t for _, t in data["events"]] == kept  # type: ignore[attr-defined]
    for kind in set(kept):
        assert len(groups[f"events-{kind}"].findall("svg:path", NS)) == kept.count(kind), kind
    assert data["end_how"] == "cut" and "end-cut" in groups
    chunks = data["chunks"]
    assert len(groups["chunks"].findall("svg:path", NS)) == len(chunks)  # type: ignore[arg-type]
    # "timing: {interval: 0.08, first_byte: 0.3}" and "stall: {after_events: 6, seconds: 0.4}"
    assert data["headers"] == pytest.approx(0.3) and data["pauses"][0][1] == 0.4  # type: ignore[index]
    (pause,) = [k for k in groups if k.startswith("injected-pause-")]
    gaps = data["gaps"]
    assert max(gaps) >= 0.4 and sorted(gaps)[-2] <= 0.3 + 0.08  # type: ignore[call-overload]
    assert {"headers", "first-byte", "first-event", "gaps", "injected-notes", pause} <= set(groups)
    assert data["first_event"] == chunks[0][0]  # type: ignore[index]  # message_start is in the first chunk


def test_an_untimed_recording_is_drawn_by_chunk_position(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    name = "openrouter-chat-keepalive-midstream-error"
    out = tmp_path / "o.svg"
    assert draw(capsys, name, "--plot", str(out))[0] == 0
    groups, data = svg(out)
    recorded = collect_cassettes(None)[name].interactions[0].response
    assert data["timed"] is False and "gaps" not in groups
    assert data["chunks"] == [[float(i), len(c.data)] for i, c in enumerate(recorded.chunks)]
    assert len(data["events"]) == len(recorded_events(name))  # type: ignore[arg-type]


def test_a_png_carries_the_same_description(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "t.png"
    assert draw(capsys, "openai-chat-finish-length-usage", "--plot", str(out))[0] == 0
    with Image.open(out) as image:
        assert image.format == "PNG" and image.size[0] > 600
        data = json.loads(image.text["Description"])  # type: ignore[attr-defined]
    assert [t for _, t in data["events"]] == ["message"] * 5 and data["end_how"] == "clean"


def test_the_committed_picture_is_what_the_command_draws(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "timeline.svg"
    assert draw(capsys, THINKING, "--plot", str(out), "--scenario", str(DOCS / "timeline-scenario.yaml"))[0] == 0
    assert out.read_bytes() == (DOCS / "timeline.svg").read_bytes()
    page = (ROOT / PAGE).read_text(encoding="utf-8")
    assert "![" in page and "(../timeline.svg)" in page
    assert f"ssemock inspect {THINKING} --plot docs/timeline.svg --scenario docs/timeline-scenario.yaml" in page


def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for argv in ((THINKING, "--plot", str(tmp_path / "x.gif")),
                 (THINKING, "--plot", str(tmp_path / "x.svg"), "--interaction", "3"),
                 (THINKING, "--plot", str(tmp_path / "x.svg"), "--scenario", "no-such-preset"),
                 (THINKING, "--scenario", "stall")):
        status, printed, err = draw(capsys, *argv)
        assert status == 2 and printed == "" and err.count("\n") == 1, argv
    assert not list(tmp_path.iterdir())


def test_without_matplotlib_the_error_says_how_to_install_it(tmp_path: Path) -> None:
    code = ("import sys; sys.modules['matplotlib'] = None; from ssemock.cli import main; "
            f"sys.exit(main(['inspect', {THINKING!r}, '--plot', {str(tmp_path / 'x.svg')!r}]))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == ("ssemock: error: drawing x.svg needs matplotlib: pip install matplotlib (ssemock's 'plot' "
                           "extra)\n")


def test_the_docs_example_prints_what_the_page_shows(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    (command,) = [line for line in page_blocks(PAGE, "sh")[1].splitlines() if "--plot" in line]
    (shown,) = [block.strip() for block in page_blocks(PAGE, "text") if "timeline.svg" in block]
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "timeline-scenario.yaml").write_bytes((DOCS / "timeline-scenario.yaml").read_bytes())
    monkeypatch.chdir(tmp_path)
    status, printed, _ = draw(capsys, *command.split()[2:])
    assert status == 0 and printed == shown + "\n"
    assert (tmp_path / "docs" / "timeline.svg").read_bytes() == (DOCS / "timeline.svg").read_bytes()
