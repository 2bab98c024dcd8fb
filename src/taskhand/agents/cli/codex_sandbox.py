"""Codex's own sandbox under taskhand: which `--sandbox` mode each role gets, and the per-unit
folder on PATH that names Codex's Linux sandbox helper, so Codex's commands still run when a
system bubblewrap is installed.
"""

from __future__ import annotations

import os
import platform
from pathlib import Path

HELPER = "codex-linux-sandbox"  # Codex's own binary, started under this name, is the helper
ELF_MAGIC = b"\x7fELF"


def sandbox_mode(writing: bool, outer_sandbox: bool) -> str:
    """Codex's `--sandbox` for a role. Inside taskhand's sandbox, none of Codex's own: that one
    allows no user namespace, which Codex's bubblewrap needs, and a reviewer's writes land in
    its disposable copy (its verdict comes from what it says, not from its files)."""
    if outer_sandbox:
        return "danger-full-access"
    return "workspace-write" if writing else "read-only"


def helper_path(program: str, folder: Path, path: str) -> str:
    """PATH for Codex with `folder` first, holding `codex-linux-sandbox` (a link to Codex's
    binary), or `path` unchanged when that binary cannot be found (not Linux, another layout).

    Codex wraps each command as `bwrap ... <helper> ... -- command`. A system bwrap older than
    0.9 (Debian 12 has 0.8) lacks `--argv0`, so Codex passes the helper by the name it was
    started under, and bwrap looks that name up on PATH. Codex puts such a link on PATH itself,
    in CODEX_HOME, except when CODEX_HOME is inside the temporary folder: then it names the
    helper `codex-linux-sandbox` and nothing on PATH answers to it.
    """
    binary = native_binary(Path(program))
    if binary is None:
        return path
    folder.mkdir(exist_ok=True)
    link = folder / HELPER
    link.unlink(missing_ok=True)  # made anew each call: a writer could have replaced it
    link.symlink_to(binary)
    return f"{folder}{os.pathsep}{path}" if path else str(folder)


def native_binary(program: Path) -> Path | None:
    """Codex's Linux binary: `program` itself, or the one npm's `codex.js` launcher starts."""
    real = program.resolve()
    if _is_elf(real):
        return real
    package = real.parent.parent  # .../@openai/codex/bin/codex.js -> .../@openai/codex
    vendors = [*sorted(package.parent.glob("codex-*/vendor")), package / "vendor"]
    for vendor in vendors:
        for target in sorted(vendor.glob(f"{platform.machine()}-*linux*")):
            for binary in (target / "bin" / "codex", target / "codex" / "codex"):
                if _is_elf(binary):
                    return binary
    return None


def _is_elf(path: Path) -> bool:
    try:
        with path.open("rb") as file:
            return file.read(4) == ELF_MAGIC
    except OSError:
        return False
