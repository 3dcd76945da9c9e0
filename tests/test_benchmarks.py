"""Smoke check: ``python -m benchmarks --quick --json FILE`` runs and writes every figure.

No timing assertion: whether goals are met depends on the machine; only that each
figure module ran and wrote well-formed figures.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from benchmarks import FIGURE_KEYS
from benchmarks.__main__ import MODULES

ROOT = Path(__file__).resolve().parent.parent


def test_quick_benchmarks_write_every_figure(tmp_path: Path) -> None:
    present = [m for m in MODULES if (ROOT / "benchmarks" / f"{m}.py").exists()]
    out = tmp_path / "figures.json"
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--quick", "--json", str(out), "--only", ",".join(present)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    figures = json.loads(out.read_text())
    for module in present:
        assert any(f["name"].startswith(module) for f in figures), f"no figure from {module}"
    for fig in figures:
        assert set(fig) == set(FIGURE_KEYS), fig
        assert isinstance(fig["value"], (int, float)) and not isinstance(fig["value"], bool), fig
        for key in ("baseline", "ratio"):
            assert fig[key] is None or isinstance(fig[key], (int, float)), fig
        assert fig["met"] in (True, False, None), fig
    assert {"replay_throughput", "timing_fidelity"} <= {f["name"] for f in figures}
