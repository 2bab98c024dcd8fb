"""Codex's own sandbox under taskhand: the helper Codex needs when a system bubblewrap is
installed. The real `codex` comes from .npm-agents; the real programs' runs with bubblewrap
installed are tests/test_agents_cli.py's.
"""

from __future__ import annotations

import os
import platform
import subprocess
from pathlib import Path

from taskhand.agents.codex_sandbox import HELPER, helper_path
from tests.test_agents_cli import program, real, real_env


def npm_layout(tmp_path: Path) -> tuple[Path, Path]:
    """node_modules as npm lays out @openai/codex: `.bin/codex`, and the binary it starts."""
    modules = tmp_path / "node_modules"
    launcher = modules / "@openai" / "codex" / "bin" / "codex.js"
    launcher.parent.mkdir(parents=True)
    launcher.write_text("#!/usr/bin/env node\n")
    vendor = modules / "@openai" / "codex-linux-x64" / "vendor"
    binary = vendor / f"{platform.machine()}-unknown-linux-musl" / "bin" / "codex"
    binary.parent.mkdir(parents=True)
    binary.write_bytes(b"\x7fELF" + bytes(60))
    (modules / ".bin").mkdir()
    (modules / ".bin" / "codex").symlink_to("../@openai/codex/bin/codex.js")
    return modules / ".bin" / "codex", binary


def test_the_helper_is_the_binary_behind_npms_launcher_and_made_anew(tmp_path: Path) -> None:
    launcher, binary = npm_layout(tmp_path)
    folder = tmp_path / "codex-path"
    assert helper_path(str(launcher), folder, "/usr/bin") == f"{folder}{os.pathsep}/usr/bin"
    assert (folder / HELPER).resolve() == binary
    (folder / HELPER).unlink()
    (folder / HELPER).symlink_to("/bin/true")  # what a writer with /tmp writable could do
    helper_path(str(launcher), folder, "/usr/bin")
    assert (folder / HELPER).resolve() == binary


def test_a_program_without_codexs_binary_leaves_path_alone(tmp_path: Path) -> None:
    script = program(tmp_path, "codex", "print('not codex')")
    assert helper_path(str(script), tmp_path / "codex-path", "/usr/bin") == "/usr/bin"
    assert not (tmp_path / "codex-path").exists()


def test_the_real_helper_is_the_same_codex(tmp_path: Path) -> None:
    codex = real("codex")
    helper_path(codex, tmp_path / "codex-path", "")
    env = real_env(tmp_path, codex)

    def version(argv0: Path | str) -> str:
        return subprocess.run([argv0, "--version"], env=env, capture_output=True, text=True).stdout

    assert version((tmp_path / "codex-path" / HELPER).resolve()) == version(codex)
    assert version(codex).startswith("codex-cli ")
