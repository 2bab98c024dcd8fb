"""Git run the harness's way, and what the harness reads of a repository and its commits.

Every call is an argv list run with `git -C <dir>`, hardened so that nothing the repository
configures runs; a failure becomes a one-line GitError that says what failed and how to fix
it. Branches are in refs.py, worktrees in worktrees.py.
"""

from __future__ import annotations

import functools
import os
import subprocess
from pathlib import Path

from taskhand.errors import UserError
from taskhand.text import printable

FALLBACK_IDENTITY = ("taskhand", "taskhand@localhost")

# Variables that would point git at another repository or index than the -C folder's, as
# they are set when taskhand itself runs from inside a git hook.
_REDIRECTING = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_COMMON_DIR",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_NAMESPACE",
    "GIT_PREFIX",
)


class GitError(UserError):
    """A git operation that failed; the message is one line ending in '(fix: ...)'."""


def error(what: str, fix: str) -> GitError:
    """The one-line error of a git operation, made printable."""
    return GitError(printable(f"{what} (fix: {fix})"))


def decode(raw: bytes) -> str:
    """Git's bytes as text; undecodable bytes of a file name survive as surrogates."""
    return os.fsdecode(raw)


# Settings that make git run a program of the configuration's choosing. The harness's own git
# overrides each of them on the command line, which beats every configuration file: a
# repository an agent could write must never make the harness execute anything.
HARDENING = (
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "core.pager=cat",
    "core.editor=false",
    "core.askPass=",
    "core.sshCommand=false",
    "core.gitProxy=",
    "core.alternateRefsCommand=",
    "core.untrackedCache=false",
    "core.splitIndex=false",
    "core.sparseCheckout=false",
    "credential.helper=",
    "diff.external=",
    "gpg.program=false",
    "sequence.editor=false",
    "uploadpack.packObjectsHook=",
    "protocol.ext.allow=never",
    "submodule.recurse=false",
    "gc.auto=0",
    "maintenance.auto=false",
)
_HARDENING_ARGS = tuple(arg for setting in HARDENING for arg in ("-c", setting))


# The hardened environment, kept with the raw environment it was made from: every git call
# needs it, and making it anew decodes every variable (a measurable cost per task with jobs).
_made: tuple[object, dict[str, str]] | None = None


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    global _made
    raw = getattr(os.environ, "_data", None)  # the variables as bytes, where os keeps them
    made = _made
    if raw is None or made is None or made[0] != raw:
        made = (dict(raw) if raw is not None else None, _hardened())
        _made = made
    return {**made[1], **(extra or {})}


def _hardened() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _REDIRECTING}
    # C locale keeps messages parseable; no optional locks so reading status never rewrites
    # the user's index; no prompts so a call can never wait on a terminal; no replace refs,
    # so nobody can make the harness read one commit's content as another's.
    env.update(
        LC_ALL="C",
        GIT_OPTIONAL_LOCKS="0",
        GIT_TERMINAL_PROMPT="0",
        GIT_NO_REPLACE_OBJECTS="1",
        GIT_PAGER="cat",
        GIT_EDITOR="false",
    )
    for name in ("GIT_EXTERNAL_DIFF", "GIT_ASKPASS", "GIT_SSH", "GIT_SSH_COMMAND"):
        env.pop(name, None)
    return env


# Object folders of the harness's own (a run's depot, workspace/depot.py) that every git call
# in a checkout also reads, by the folder git runs in: what attempts produce is kept there,
# out of the user's repository, and reads the same as if it were in it.
_READ_ALSO: dict[str, tuple[str, ...]] = {}
_ALTERNATES = "GIT_ALTERNATE_OBJECT_DIRECTORIES"


def read_also(repo: Path, *objects: Path) -> None:
    """Let every later git call in `repo` also read the object folders `objects` (added to
    those it reads already): through the environment, so nothing of the repository changes."""
    for key in {str(repo), str(repo.resolve())}:
        known = _READ_ALSO.get(key, ())
        _READ_ALSO[key] = (*known, *(str(o) for o in objects if str(o) not in known))


def reads_also(repo: Path) -> list[str]:
    """The object folders of the harness's own that git calls in `repo` read, those there."""
    return [folder for folder in _READ_ALSO.get(str(repo), ()) if os.path.isdir(folder)]


def alone() -> dict[str, str]:
    """The environment of a git call that reads the repository's own objects alone."""
    return {_ALTERNATES: ""}


def _objects_env(folder: Path, env: dict[str, str] | None) -> dict[str, str] | None:
    if env and (_ALTERNATES in env or "GIT_OBJECT_DIRECTORY" in env):
        return env
    also = reads_also(folder) if _READ_ALSO else []
    if not also:
        return env
    # git reads a quoted entry C-style: a path holding the separator stays one entry.
    entries = [f'"{f}"' if os.pathsep in f or f.startswith('"') else f for f in also]
    return {**(env or {}), _ALTERNATES: os.pathsep.join(entries)}


def run(
    folder: Path,
    *args: str,
    ok: tuple[int, ...] = (0,),
    stdin: bytes | None = None,
    env: dict[str, str] | None = None,
    fix: str = "run the same git command in that folder to see the full error",
) -> subprocess.CompletedProcess[bytes]:
    """`git -C folder ARGS`, hardened: the finished process when its exit code is in `ok`,
    else a GitError that says what failed, with `fix`. Every git process of taskhand is one."""
    try:
        done = subprocess.run(
            ["git", "-C", str(folder), *_HARDENING_ARGS, *args],
            input=stdin,
            stdin=None if stdin is not None else subprocess.DEVNULL,
            capture_output=True,
            env=_env(_objects_env(folder, env)),
            check=False,
        )
    except FileNotFoundError:
        raise error("git is not installed", "install git and put it on PATH") from None
    if done.returncode in ok:
        return done
    message = decode(done.stderr).strip()
    if "not a git repository" in message or "must be run in a work tree" in message:
        raise error(f"not a git repository: {folder}", "run inside a repository, or git init")
    if "cannot change to" in message:
        raise error(f"no such folder: {folder}", "check the path")
    if "dubious ownership" in message:
        raise error(
            f"git refuses a repository owned by someone else: {folder}",
            f"git config --global --add safe.directory {folder}",
        )
    raise error(f"git {' '.join(args[:2])} failed in {folder}: {reason(done.stderr)}", fix)


def reason(stderr: bytes) -> str:
    """The line of git's stderr that says why it failed."""
    # Progress lines ("Preparing worktree ...") come first; the cause is the fatal one.
    lines = [line for line in decode(stderr).splitlines() if line.strip()] or ["no message"]
    return next((line for line in lines if line.startswith(("fatal:", "error:"))), lines[-1])


def output(folder: Path, *args: str) -> str:
    """What `run` printed, as text without its final newline."""
    return decode(run(folder, *args).stdout).rstrip("\n")


def fields(raw: bytes) -> list[str]:
    """The fields of git's NUL-terminated (-z) output."""
    return [decode(field) for field in raw.split(b"\0")[:-1]] if raw else []


def find_repo(path: Path) -> Path:
    """The top folder of the working tree that holds `path` (a file or a folder)."""
    if not path.exists():
        raise error(f"no such file or folder: {path}", "check the path")
    folder = path if path.is_dir() else path.parent
    return Path(output(folder, "rev-parse", "--show-toplevel"))


def repo_for(plan_path: Path, repo: Path | None) -> Path:
    """The repository a plan runs in: `repo`, else the one holding the plan, else the current
    folder's."""
    try:
        return find_repo(repo or plan_path)
    except GitError:
        if repo is not None:
            raise
        return find_repo(Path.cwd())


def has_commits(repo: Path) -> bool:
    done = run(repo, "rev-parse", "--verify", "--quiet", "HEAD^{commit}", ok=(0, 1))
    return done.returncode == 0


# Commits known to exist, by (repository, full sha): objects never change, so a full sha that
# resolved once needs no second git process (a run resolves the same few shas many times).
_KNOWN_COMMITS: set[tuple[str, str]] = set()


def resolve(repo: Path, ref: str) -> str:
    """The full sha of the commit `ref` names (tags are peeled)."""
    if (str(repo), ref) in _KNOWN_COMMITS:
        return ref
    if ref and not ref.startswith("-"):
        verify = ["rev-parse", "--verify", "--quiet", "--end-of-options"]
        done = run(repo, *verify, f"{ref}^{{commit}}", ok=(0, 1))
        if done.returncode == 0:
            full = decode(done.stdout).strip()
            if full == ref:  # a commit's own sha (a tag's sha resolves to another)
                _KNOWN_COMMITS.add((str(repo), ref))
            return full
    if not has_commits(repo):
        raise error(f"the repository has no commits yet: {repo}", "make a first commit")
    raise error(f"no commit named {ref!r} in {repo}", "give a branch, tag or commit sha")


def dirty_paths(repo: Path) -> list[str]:
    """Modified, staged and untracked paths (not ignored ones), both sides of a rename."""
    raw = run(repo, "status", "--porcelain=v1", "-z", "--untracked-files=all").stdout
    entries = fields(raw)
    paths: set[str] = set()
    i = 0
    while i < len(entries):
        entry = entries[i]
        paths.add(entry[3:])
        if entry[0] in "RC":  # the original path follows as its own field
            i += 1
            paths.add(entries[i])
        i += 1
    return sorted(paths)


@functools.lru_cache(maxsize=16)
def common_dir(repo: Path) -> Path:
    """The repository's own .git folder, which its worktrees share (it never moves).

    Asked of git once per checkout: the answer is kept with the identity of the checkout's
    .git (folder or file), and asked again when that is another."""
    try:
        info = os.stat(os.path.join(repo, ".git"))
        identity: tuple[int, int] | None = (info.st_dev, info.st_ino)
    except OSError:
        identity = None
    known = _COMMON_DIRS.get(str(repo))
    if identity is not None and known is not None and known[0] == identity:
        return known[1]
    common = Path(output(repo, "rev-parse", "--git-common-dir"))
    found = (common if common.is_absolute() else repo / common).resolve()
    if identity is not None:
        _COMMON_DIRS[str(repo)] = (identity, found)
    return found


def object_folders(repo: Path) -> list[Path]:
    """Where the repository's objects are: its own folder and those its alternates borrow
    from, in turn (what a workspace must be able to read, and nothing else of .git)."""
    found: list[Path] = []
    pending = [common_dir(repo) / "objects"]
    while pending and len(found) < 16:  # a cycle of alternates ends here
        folder = pending.pop(0).resolve()
        if folder in found or not folder.is_dir():
            continue
        found.append(folder)
        try:
            lines = (folder / "info" / "alternates").read_text(errors="replace").splitlines()
        except OSError:
            continue
        pending += [folder / line.strip() for line in lines if line.strip() and line[0] != "#"]
    return found


# checkout -> (the identity of its .git, its common dir)
_COMMON_DIRS: dict[str, tuple[tuple[int, int], Path]] = {}


def _identity(role: str, config: dict[str, str]) -> tuple[str, str]:
    # git's own order (environment, then configuration), but never its guess from the
    # host name, which differs between machines and is refused under user.useConfigOnly.
    name = os.environ.get(f"GIT_{role}_NAME") or config.get("user.name")
    email = os.environ.get(f"GIT_{role}_EMAIL") or config.get("user.email")
    return (name, email) if name and email else FALLBACK_IDENTITY


def config_identity(repo: Path) -> tuple[object, ...]:
    """The stat identity of every configuration file git reads for `repo`: what a cached
    answer from its configuration is keyed on, so an edit is seen at the next call."""
    home = Path.home()
    xdg = os.environ.get("XDG_CONFIG_HOME") or str(home / ".config")
    files = [
        common_dir(repo) / "config",
        Path(os.environ.get("GIT_CONFIG_GLOBAL") or home / ".gitconfig"),
        Path(xdg) / "git" / "config",
    ]
    found: list[object] = [os.environ.get("GIT_CONFIG_NOSYSTEM")]
    for path in files:
        try:
            info = os.stat(path)
            found.append((str(path), info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns))
        except OSError:
            found.append((str(path), None))
    return tuple(found)


def _user_config(repo: Path) -> dict[str, str]:
    return dict(_user_config_at(repo, config_identity(repo)))


@functools.lru_cache(maxsize=16)
def _user_config_at(repo: Path, identity: tuple[object, ...]) -> tuple[tuple[str, str], ...]:
    """user.name and user.email in one git process, asked again when a file changed."""
    done = run(repo, "config", "--get-regexp", r"^user\.(name|email)$", ok=(0, 1))
    pairs = (line.partition(" ") for line in decode(done.stdout).splitlines())
    return tuple((key, value.strip()) for key, _, value in pairs if value.strip())


def commit_tree(repo: Path, tree: str, base: str, message: str, into: tuple[str, ...] = ()) -> str:
    """A new commit of `tree` whose only parent is `base`, by the user's git identity;
    written where the git options `into` say (a depot's), else into `repo`."""
    config = _user_config(repo)
    who = _identity("AUTHOR", config)
    committer = _identity("COMMITTER", config)
    env = {
        "GIT_AUTHOR_NAME": who[0],
        "GIT_AUTHOR_EMAIL": who[1],
        "GIT_COMMITTER_NAME": committer[0],
        "GIT_COMMITTER_EMAIL": committer[1],
    }
    text = message if message.endswith("\n") else message + "\n"
    # --no-gpg-sign: a signing prompt would hang an unattended run.
    commit = [*into, "commit-tree", "--no-gpg-sign", tree, "-p", base, "-F", "-"]
    done = run(repo, *commit, stdin=text.encode(), env=env)
    made = decode(done.stdout).strip()
    _KNOWN_COMMITS.add((str(repo), made))  # git just wrote it: resolving it needs no process
    return made


def is_ancestor(repo: Path, ancestor: str, descendant: str) -> bool:
    older, newer = resolve(repo, ancestor), resolve(repo, descendant)
    return run(repo, "merge-base", "--is-ancestor", older, newer, ok=(0, 1)).returncode == 0


def tree_of(repo: Path, sha: str) -> str:
    return output(repo, "rev-parse", "--verify", f"{resolve(repo, sha)}^{{tree}}")


def tree_modes(repo: Path, rev: str, paths: list[str]) -> dict[str, str]:
    """The mode (100755, 100644, 120000, 040000, ...) of each of `paths` that `rev` holds.

    Paths are relative to the repository's top folder; ones the commit lacks are left out.
    """
    if not paths:
        return {}
    args = ["ls-tree", "-z", "--full-tree", resolve(repo, rev), "--", *paths]
    done = run(repo, *args, env={"GIT_LITERAL_PATHSPECS": "1"})
    modes = {}
    for entry in fields(done.stdout):
        meta, _, path = entry.partition("\t")
        modes[path] = meta.split(" ", 1)[0]
    return modes
