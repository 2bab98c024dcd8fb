"""What a sandboxed process sees: an allow-list of the machine, as bubblewrap's mount options.

- the system's folders, read-only, with the files in them that hold secrets masked;
- the programs it runs, read-only, each folder alone: PATH's folders, this Python, and what
  the sandbox names readable (an agent program's package, the user's git objects);
- a private, empty, size-capped home, /tmp, /var/tmp and /dev/shm;
- the folders it may write;
- nothing else: not your home, your checkout, another workspace, /run's sockets, /srv or
  /mnt; and its root folder is read-only, so it cannot grow.

A folder is never shown when it holds your home or one of the sandbox's `hidden` paths (your
checkout, the plan): a program folder inside your checkout is shown alone.
"""

from __future__ import annotations

import glob
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

from taskhand.unit import Sandbox

SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/nix")
# Readable by root alone, and root inside the sandbox is still their owner: masked.
MASKED = (
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/sudoers",
    "/etc/sudoers.d",
    "/etc/ssl/private",
    "/etc/ssh/ssh_host_*key",
    "/etc/NetworkManager/system-connections",
    "/etc/wireguard",
)
# Files under /etc that are links to places outside the system folders (systemd-resolved).
LINKED = ("/etc/resolv.conf", "/etc/hosts", "/etc/localtime")
# Toolchains (kept in a home folder): a program on PATH in one (a shim, a proxy) needs the
# whole toolchain, and the companions named with it beside it.
TOOLCHAINS = {
    ".pyenv": (".pyenv",),
    ".cargo": (".cargo", ".rustup"),
    ".rustup": (".rustup",),
    ".nvm": (".nvm",),
    ".volta": (".volta",),
    ".bun": (".bun",),
    ".deno": (".deno",),
    ".asdf": (".asdf",),
    ".rbenv": (".rbenv",),
    ".goenv": (".goenv",),
    ".sdkman": (".sdkman",),
    "go": ("go",),
}
# Credentials inside those toolchains.
TOOLCHAIN_SECRETS = (".cargo/credentials", ".cargo/credentials.toml")
PRIVATE = ("/tmp", "/var/tmp", "/dev/shm")


def mounts(sandbox: Sandbox, writable: Sequence[Path]) -> list[str]:
    """bubblewrap's options for the view: system, masks, private folders, programs, writable."""
    home = _home()
    options: list[str] = []
    for folder in SYSTEM:
        if os.path.islink(folder):
            options += ["--symlink", os.readlink(folder), folder]
        elif os.path.isdir(folder):
            options += ["--ro-bind", folder, folder]
    for linked in LINKED:
        real = os.path.realpath(linked)
        if real != linked and os.path.exists(real) and not _under(real, SYSTEM):
            options += ["--ro-bind", real, real]
    options += _masks()
    # /proc read-only: no process can open another's /proc/<pid>/mem to write into it (the
    # agent program's memory, say, from a test it runs), which no seccomp rule could refuse.
    options += ["--proc", "/proc", "--remount-ro", "/proc", "--dev", "/dev"]
    size = str(sandbox.limits.tmp) if sandbox.limits.tmp else ""
    for private in [*PRIVATE, *([str(home)] if home else [])]:
        options += [*(["--size", size] if size else []), "--tmpfs", private]
    hidden = [*sandbox.hidden, *([home] if home else [])]
    shown = sorted(set(_shown([*sandbox.readable, *programs()], hidden)), key=_depth)
    for source, target in shown:
        options += ["--ro-bind", source, target]
    if home:
        for secret in TOOLCHAIN_SECRETS:
            if (home / secret).is_file():
                options += ["--ro-bind", "/dev/null", str(home / secret)]
    for path in sorted({str(p.resolve()) for p in writable if p.exists()}, key=len):
        options += ["--bind", path, path]
    return [*options, "--remount-ro", "/"]


def programs() -> list[Path]:
    """Where programs and this Python live: PATH's folders (the whole toolchain one is part
    of, such as ~/.pyenv for its shims), this interpreter's installation, environment and
    import path."""
    found: list[Path] = []
    for entry in os.environ.get("PATH", "").split(os.pathsep):
        path = Path(entry)
        if not path.is_absolute():
            continue
        found.append(path)
        toolchain = next((p for p in [path, *path.parents] if p.name in TOOLCHAINS), None)
        if toolchain is not None:
            found += [toolchain.parent / name for name in TOOLCHAINS[toolchain.name]]
        if path.name == "bin" and path.parent.name == ".local":  # its scripts import from lib
            found.append(path.parent / "lib")
    # Where this Python imports from (its site-packages, PYTHONPATH): taskhand's own servers
    # started inside (the outcome tools) import from there.
    imports = [Path(p) for p in sys.path if p and os.path.isabs(p) and os.path.isdir(p)]
    return [*found, Path(sys.prefix), Path(sys.base_prefix), *imports]


def program_folders(program: Path) -> list[Path]:
    """What a program needs beside its own file: its package's `node_modules` (a launcher
    finds its binary in a sibling package), its virtual environment and that one's Python,
    or else its folder."""
    real = program.resolve()
    folders = [real.parent]
    top = next((p for p in reversed(real.parents) if p.name == "node_modules"), None)
    if top is not None:
        folders.append(top)
    for parent in real.parents:
        config = parent / "pyvenv.cfg"
        if config.is_file():
            folders.append(parent)
            folders += _venv_base(config)
            break
    return folders


def command_folders(argv: Sequence[str]) -> list[Path]:
    """What a configured command needs: its program's folders, and the folder of each file
    its arguments name by absolute path (`python /opt/agent/main.py`)."""
    found = program_folders(Path(argv[0])) if argv else []
    for arg in argv[1:]:
        path = Path(arg)
        if path.is_absolute() and path.exists():
            found.append(path if path.is_dir() else path.parent)
    return found


def _venv_base(config: Path) -> list[Path]:
    try:
        lines = config.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []
    for line in lines:
        key, _, value = line.partition("=")
        if key.strip() == "home" and value.strip():
            return [Path(value.strip()).parent]  # home is the base Python's bin folder
    return []


def _home() -> Path | None:
    value = os.environ.get("HOME", "")
    home = Path(value) if value else None
    if home is None or not home.is_absolute() or home == Path("/") or _under(value, SYSTEM):
        return None
    return home


def _shown(paths: Sequence[Path], hidden: Sequence[Path]) -> Iterator[tuple[str, str]]:
    """(source, target) binds for `paths` that exist, lie outside the system folders and hold
    nothing hidden. A path under a link is shown where it points and where it is named; a
    path that is itself a link, where it points and with the folder that holds the link."""
    for path in paths:
        if not path.is_absolute() or not os.path.exists(path):
            continue
        named = os.path.normpath(path)
        real = os.path.realpath(path)
        binds = {(real, real)}
        if os.path.islink(named):
            folder = os.path.dirname(named)
            binds.add((os.path.realpath(folder), folder))
        elif named != real:
            binds.add((real, named))
        for source, target in binds:
            if _under(target, SYSTEM) or any(_holds(target, str(h)) for h in hidden):
                continue
            yield source, target


def _masks() -> list[str]:
    options: list[str] = []
    for pattern in MASKED:
        for path in sorted(glob.glob(pattern)):
            if os.path.isdir(path) and not os.path.islink(path):
                options += ["--tmpfs", path, "--remount-ro", path]
            elif os.path.isfile(path):
                options += ["--ro-bind", "/dev/null", path]
    return options


def _under(path: str, folders: Sequence[str]) -> bool:
    return any(path == f or path.startswith(f + "/") for f in folders)


def _holds(path: str, other: str) -> bool:
    """Whether showing `path` would show `other` (it is `other` or a folder above it)."""
    other = os.path.normpath(other)
    return other == path or other.startswith(path.rstrip("/") + "/")


def _depth(bind: tuple[str, str]) -> tuple[int, str]:
    return bind[1].count("/"), bind[1]
