"""Codex's own sandbox under taskhand: the helper Codex needs when a system bubblewrap is
installed, and the outer-sandbox option (inside ours, no sandbox of Codex's own for any role).
The real `codex` comes from .npm-agents.
"""

from __future__ import annotations

import os
import platform
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from taskhand.agents.cli.codex_sandbox import HELPER, helper_path
from taskhand.host.sandbox import bwrap_problem
from taskhand.unit import Case, Role, Sandbox
from tests.agents.test_cli import (
    ACCEPT,
    DONE,
    codex_agent,
    program,
    real,
    real_env,
    repo,
    shell,
    unit,
)
from tests.fakes import scripted_responses as responses


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


@pytest.mark.parametrize("outer_sandbox", [False, True])
def test_real_codex_writer_drops_its_own_sandbox_only_inside_ours(
    tmp_path: Path, outer_sandbox: bool
) -> None:
    work = repo(tmp_path)
    script = [shell("printf 'hi\\n' > hello.txt; touch .git/probe"), responses.Turn(text=DONE)]
    with responses.ScriptedResponses(script) as api:
        outcome = codex_agent(tmp_path, api, outer_sandbox).run(unit(work))
    assert outcome.case is Case.DONE, outcome.failure
    assert (work / "hello.txt").read_text() == "hi\n"
    # Codex's workspace-write sandbox keeps .git read-only; with it off, only ours would.
    assert (work / ".git" / "probe").exists() is outer_sandbox


@pytest.mark.skipif(bool(bwrap_problem()), reason=f"no sandbox: {bwrap_problem()}")
@pytest.mark.parametrize("role", [Role.IMPLEMENTER, Role.EVALUATOR])
def test_real_codex_inside_our_sandbox_runs_without_its_own(tmp_path: Path, role: Role) -> None:
    """Our sandbox allows no user namespace, so Codex's bubblewrap could not start in it: every
    role runs with Codex's sandbox off, confined by ours (a reviewer writes only its copy)."""
    work = repo(tmp_path)
    reply = DONE if role is Role.IMPLEMENTER else ACCEPT
    script = [shell("printf 'hi\\n' > hello.txt"), responses.Turn(text=reply)]
    with responses.ScriptedResponses(script) as api:
        confined = replace(unit(work, role=role), sandbox=Sandbox("bwrap"))
        outcome = codex_agent(tmp_path, api).run(confined)
    assert outcome.case is Case.DONE, outcome.failure
    assert (work / "hello.txt").read_text() == "hi\n"
    [started] = [m for m in outcome.transcript if m.get("role") == "agent"][:1]
    assert "danger-full-access" in started["argv"]  # type: ignore[operator]
