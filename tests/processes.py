"""Child processes the tests start (``ssemock serve``): stopped and their pipes closed, whatever happened."""

from __future__ import annotations

import subprocess


def reap(proc: subprocess.Popen[str]) -> None:
    """Kill ``proc`` if it still runs, wait for it (at most 10 s) and close its pipes."""
    if proc.poll() is None:
        proc.kill()
    proc.wait(10)
    for stream in (proc.stdout, proc.stderr):
        if stream:
            stream.close()
