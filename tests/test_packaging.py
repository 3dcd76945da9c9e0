"""The package as another project gets it: the wheel pip builds from a checkout's path, from a git URL and
from the sdist, installed into a new virtualenv (offline: no index, no build isolation)."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tomllib
import zipfile
from pathlib import Path

import httpx
import pytest
from packaging.requirements import Requirement

from .docs_examples import page_blocks
from .processes import reap

ROOT = Path(__file__).parent.parent
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
VERSION = PROJECT["version"]
ENV = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "PIP_INDEX_URL")}


def readme_install() -> tuple[list[str], str]:
    """The README's install lines, and its git URL requirement (``ssemock[…] @ git+https://<URL>@<commit>``)."""
    (block,) = [b for b in page_blocks("README.md", "sh") if "pip install /path/to/ssemock" in b]
    (git_line,) = [line for line in block.splitlines() if "@ git+" in line]
    return block.splitlines(), git_line.split("'")[1]


def run(*args: str | Path, cwd: Path | None = None) -> str:
    done = subprocess.run([str(a) for a in args], cwd=cwd, env=ENV, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"{args}: {done.stdout}{done.stderr}"
    return done.stdout


def pip_wheel(requirement: str, out: Path) -> Path:
    """What ``pip install PATH`` / ``pip install 'ssemock @ git+…'`` build, without reaching an index."""
    run(
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "--no-deps",
        "--no-build-isolation",
        "--no-index",
        "-q",
        "-w",
        out,
        requirement,
    )
    (wheel,) = out.glob("ssemock-*.whl")
    return wheel


def test_the_readme_install_commands_name_this_package_and_its_extras() -> None:
    extras = set(PROJECT["optional-dependencies"])
    lines, git_requirement = readme_install()
    (path_line,) = [line for line in lines if "pip install /path/to/ssemock" in line]
    for named in re.findall(r"'/path/to/ssemock\[([^]]+)\]'", path_line):
        assert set(named.split(",")) <= extras
    assert git_requirement.endswith("@<commit>") and "<the ssemock git repository URL>" in git_requirement
    example = git_requirement.replace("<the ssemock git repository URL>", "example.org/owner/ssemock.git")
    parsed = Requirement(example.replace("<commit>", "0" * 40))  # PEP 508, as pip reads it
    assert parsed.name == PROJECT["name"] and parsed.url and parsed.url.startswith("git+https://")
    assert parsed.extras and parsed.extras <= extras


def digests(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.glob("*.yaml"))}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return pip_wheel(str(ROOT), tmp_path_factory.mktemp("path-wheel"))


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new virtualenv (no system site-packages) with the wheel installed, nothing else, by pip.

    Its dependencies then come from this interpreter's site-packages through a ``.pth`` line written
    after the install (no network here; pip never sees them, so it cannot touch them)."""
    home = tmp_path_factory.mktemp("venv") / "v"
    run(sys.executable, "-m", "venv", "--without-pip", home)
    python = home / "bin" / "python"
    run(sys.executable, "-m", "pip", "--python", python, "install", "--no-index", "--no-deps", "-q", wheel)
    site = Path(run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])").strip())
    ours = {sysconfig.get_paths()[k] for k in ("purelib", "platlib")}
    (site / "zz-dependencies.pth").write_text("".join(f"{p}\n" for p in sorted(ours)), encoding="utf-8")
    return home


INSPECT = """
import importlib.metadata as md, json, ssemock
from ssemock.bundled import bundled_cassettes, bundled_scenarios
dist = md.distribution("ssemock")
print(json.dumps({
    "file": ssemock.__file__, "version": ssemock.__version__,
    "py.typed": (__import__("pathlib").Path(ssemock.__file__).parent / "py.typed").is_file(),
    "cassettes": str(bundled_cassettes()), "scenarios": str(bundled_scenarios()),
    "entry_points": sorted([e.group, e.name, e.value] for e in dist.entry_points),
    "extras": dist.metadata.get_all("Provides-Extra"), "requires": dist.requires,
}))
"""


def test_the_installed_wheel_holds_the_command_the_data_and_the_plugin(venv: Path) -> None:
    assert run(venv / "bin" / "ssemock", "--version").strip() == f"ssemock {VERSION}"
    seen = json.loads(run(venv / "bin" / "python", "-c", INSPECT, cwd=venv))  # not the checkout's folder
    package = Path(seen["file"]).parent
    assert package.is_relative_to(venv), "imported from the new virtualenv, not the checkout"
    assert seen["version"] == VERSION and seen["py.typed"]
    assert Path(seen["cassettes"]) == package / "bundled" / "cassettes"
    assert Path(seen["scenarios"]) == package / "bundled" / "scenarios"
    assert digests(Path(seen["cassettes"])) == digests(ROOT / "cassettes")
    assert digests(Path(seen["scenarios"])) == digests(ROOT / "scenarios")
    tree = {
        p.relative_to(ROOT / "ssemock")
        for p in (ROOT / "ssemock").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and not p.is_relative_to(ROOT / "ssemock" / "bundled")
    }
    assert tree <= {p.relative_to(package) for p in package.rglob("*") if p.is_file()}, "package data included"
    assert ["pytest11", "ssemock", "ssemock.pytest_plugin"] in seen["entry_points"]
    assert ["console_scripts", "ssemock", "ssemock.cli:console"] in seen["entry_points"]
    assert set(seen["extras"]) >= {"workers", "plot"}
    assert "gunicorn>=23; extra == 'workers'" in seen["requires"]
    assert "matplotlib>=3.8; extra == 'plot'" in seen["requires"]


def test_the_installed_command_serves_the_bundled_recordings(venv: Path, tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [str(venv / "bin" / "ssemock"), "serve", "--port", "0"],
        cwd=tmp_path,
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip().removeprefix("ssemock serving on ")
        listed = httpx.get(url + "/_ssemock/cassettes", timeout=10).json()
        # the README's first request: openai/openai-python's recording, byte for byte
        answer = httpx.post(url + "/v1/chat/completions", json={"model": "gpt-4o", "stream": True}, timeout=10)
    finally:
        reap(proc)
    assert {c["name"] for c in listed} == {p.stem for p in (ROOT / "cassettes").glob("*.yaml")}
    real = ROOT / "tests" / "data" / "realworld" / "openai-chat-finish-length-usage.sse.bin"
    assert answer.content == real.read_bytes()


def test_the_installed_package_ships_the_schemas_it_generates(venv: Path) -> None:
    python = venv / "bin" / "python"
    for kind in ("cassette", "scenario", "stubs"):
        shipped = Path(run(python, "-m", "ssemock.schemas", "--path", kind, cwd=venv).strip())
        assert shipped.is_relative_to(venv) and shipped.name == f"{kind}.schema.json"
        assert shipped.read_bytes() == (ROOT / "ssemock" / "schemas" / shipped.name).read_bytes()
    run(python, "-m", "ssemock.schemas", "--check", cwd=venv)  # the installed generator writes the same


PLUGIN_TEST = """
import httpx, pytest, ssemock.pytest_plugin, sys


@pytest.mark.ssemock(cassette="openai-chat-finish-length-usage")
def test_replay(sse_mock):
    assert ssemock.pytest_plugin.__file__.startswith(sys.prefix)
    r = httpx.post(sse_mock.url + "/v1/chat/completions", json={"model": "gpt-4o", "stream": True})
    assert r.text.endswith("data: [DONE]\\n\\n")
"""


def test_the_installed_pytest_plugin_loads_by_its_entry_point(venv: Path, tmp_path: Path) -> None:
    (tmp_path / "pytest.ini").write_text("[pytest]\naddopts = -p no:cacheprovider\n", encoding="utf-8")
    (tmp_path / "test_installed.py").write_text(PLUGIN_TEST, encoding="utf-8")
    out = run(
        venv / "bin" / "python",
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:xdist",
        "-W",
        "ignore::DeprecationWarning",
        cwd=tmp_path,
    )
    assert "1 passed" in out


def members(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as zipped:
        return sorted(n for n in zipped.namelist() if not n.endswith("/RECORD"))


def test_the_git_url_route_builds_the_same_wheel(wheel: Path, tmp_path: Path) -> None:
    """The README's ``pip install 'ssemock[…] @ git+…@<commit>'``: pip clones the commit and builds it
    (here a ``file://`` URL of this checkout, offline)."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    commit = run("git", "-C", ROOT, "rev-parse", "HEAD").strip()
    local = readme_install()[1].replace("https://<the ssemock git repository URL>", f"file://localhost{ROOT.resolve()}")
    cloned = pip_wheel(local.replace("<commit>", commit), tmp_path)
    committed = set(run("git", "-C", ROOT, "ls-tree", "-r", "--name-only", commit, "cassettes", "scenarios").split())
    assert {f"ssemock/bundled/{n}" for n in committed} <= set(members(cloned))
    assert {n for n in members(cloned) if n.startswith("ssemock/bundled/")} == {
        f"ssemock/bundled/{n}" for n in committed
    }
    assert "ssemock/py.typed" in members(cloned)


def test_the_sdist_holds_what_its_wheel_needs(wheel: Path, tmp_path: Path) -> None:
    run(sys.executable, "-m", "hatchling", "build", "-t", "sdist", "-d", tmp_path / "dist", cwd=ROOT)
    (sdist,) = (tmp_path / "dist").glob("ssemock-*.tar.gz")
    with tarfile.open(sdist) as packed:
        names = {n.split("/", 1)[1] for n in packed.getnames() if "/" in n}
    assert {
        "pyproject.toml",
        "README.md",
        "ssemock/py.typed",
        "cassettes/openai-chat-tool-calls-usage.yaml",
        "scenarios/bom.yaml",
    } <= names
    assert members(pip_wheel(str(sdist), tmp_path / "from-sdist")) == members(wheel)
