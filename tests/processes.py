"""Child processes the tests start (``ssemock serve``): stopped and their pipes closed, whatever happened;
and commands run to measure their peak memory."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def reap(proc: subprocess.Popen[str]) -> None:
    """Kill ``proc`` if it still runs, wait for it (at most 10 s) and close its pipes."""
    if proc.poll() is None:
        proc.kill()
    proc.wait(10)
    for stream in (proc.stdout, proc.stderr):
        if stream:
            stream.close()


_MEASURED = """
import resource, subprocess, sys
done = subprocess.run(sys.argv[3:], capture_output=True, text=True, timeout=float(sys.argv[2]))
with open(sys.argv[1], "w") as out:
    out.write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024))
sys.stdout.write(done.stdout)
sys.stderr.write(done.stderr)
sys.exit(done.returncode)
"""


def run_measured(argv: list[str], peak_file: Path, *, timeout: float = 300,
                 env: dict[str, str] | None = None) -> tuple[subprocess.CompletedProcess[str], int]:
    """Run ``argv`` (at most ``timeout`` seconds); its result, and its peak resident memory in bytes.

    The command runs as the only child of a new Python process, whose ``RUSAGE_CHILDREN`` (the
    largest of its children's, in KiB on Linux) is thus the command's alone; ``peak_file`` carries it back.
    """
    done = subprocess.run([sys.executable, "-c", _MEASURED, str(peak_file), str(timeout), *argv],
                          capture_output=True, text=True, timeout=timeout + 30, check=False, env=env)
    return done, int(peak_file.read_text())
