"""Git against the remote: its address, a branch's commit there (`git ls-remote`), and the push
(`git push -u REMOTE BRANCH`, a ref only, never a checkout of the user's tree).

Run the harness's hardened way, with two differences a push needs: a deadline (a network can
hang), and the user's own ssh command and credential helpers, read from their global and
system settings only: the repository's settings, which work in it could have written, never
choose a program the harness runs.
"""

from __future__ import annotations

import os
import shlex
import time
from pathlib import Path

from taskhand.delivery import DeliveryError
from taskhand.host.process import Capture, Ran, run_group
from taskhand.host.secrets import Redactor
from taskhand.text import printable, shorten
from taskhand.workspace import git

PUSH_SECONDS = 600.0
ASK_SECONDS = 120.0
OUTPUT_LIMIT = 256 * 1024
# Settings a push takes from the user's own configuration (git.HARDENING blanks them).
USERS_OWN = ("core.sshCommand", "core.askPass", "credential.helper")
# Variables that would point git at another repository than the -C folder (as in a hook).
_REDIRECTING = (
    *("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_PREFIX"),
    *("GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE"),
)


def url(repo: Path, remote: str) -> str | None:
    """The address of the remote named `remote`, or None when the repository has none."""
    if not remote or remote.startswith("-"):
        return None
    done = git.run(repo, "remote", "get-url", remote, ok=(0, 2))
    return git.decode(done.stdout).strip() if done.returncode == 0 else None


def branch_tip(repo: Path, remote: str, branch: str) -> str | None:
    """The commit `branch` points at on the remote, or None when the remote has no such branch."""
    ref = f"refs/heads/{branch}"
    shown = f"git ls-remote {remote} {branch}"
    pack = "--upload-pack=git-upload-pack"  # never the repository's remote.*.uploadpack
    ran = _remote_git(repo, ASK_SECONDS, shown, "ls-remote", pack, remote, ref)
    for line in ran.stdout.splitlines():
        sha, _, name = line.partition("\t")
        if name.strip() == ref:
            return sha.strip()
    return None


def push(repo: Path, remote: str, branch: str) -> None:
    """`git push -u REMOTE BRANCH`: the local branch to the remote's branch of that name, and
    the remote's as its upstream. Never forced: a remote branch that moved refuses it."""
    ref = f"refs/heads/{branch}"
    pack = "--receive-pack=git-receive-pack"  # never the repository's remote.*.receivepack
    shown = f"git push -u {remote} {branch}"
    _remote_git(repo, PUSH_SECONDS, shown, "push", "-u", pack, remote, f"{ref}:{ref}")


def known(repo: Path, sha: str) -> bool:
    """Whether the repository holds the commit `sha` (one the remote has may be new here)."""
    done = git.run(repo, "cat-file", "-e", f"{sha}^{{commit}}", ok=(0, 1, 128))
    return done.returncode == 0


def _remote_git(repo: Path, seconds: float, command: str, *args: str) -> Ran:
    argv = ["git", "-C", str(repo), *_settings(repo), *args]
    try:
        ran = run_group(
            argv,
            repo,
            _env(),
            time.monotonic() + seconds,
            stdout=Capture(OUTPUT_LIMIT, head=OUTPUT_LIMIT // 2),
            stderr=Capture(OUTPUT_LIMIT, head=0),
        )
    except OSError as exc:
        raise DeliveryError(f"git could not start ({exc.strerror})", fix="install git") from None
    if ran.timed_out:
        raise DeliveryError(f"{command} did not finish within {seconds:g}s")
    if ran.code != 0:
        raise DeliveryError(f"{command} failed: {_why(ran)}")
    return ran


def _settings(repo: Path) -> list[str]:
    """The hardening, with the user's own ssh command and credential helpers for the push."""
    args: list[str] = []
    for setting in git.HARDENING:
        if setting.partition("=")[0] not in USERS_OWN:
            args += ["-c", setting]
    args += ["-c", "credential.helper="]  # empties the list the repository may have added to
    for helper in _users(repo, "credential.helper"):
        args += ["-c", f"credential.helper={helper}"]
    ssh, askpass = _users(repo, "core.sshCommand"), _users(repo, "core.askPass")
    args += ["-c", f"core.sshCommand={ssh[-1] if ssh else 'ssh'}"]
    args += ["-c", f"core.askPass={askpass[-1] if askpass else ''}"]
    return args


def _users(repo: Path, key: str) -> list[str]:
    """`key`'s values in the user's system and global settings, in the order git reads them."""
    found: list[str] = []
    for scope in ("--system", "--global"):
        done = git.run(repo, "config", scope, "--get-all", key, ok=(0, 1))
        found += git.decode(done.stdout).splitlines() if done.returncode == 0 else []
    return found


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _REDIRECTING}
    env.update(LC_ALL="C", GIT_TERMINAL_PROMPT="0", GIT_OPTIONAL_LOCKS="0")
    if env.get("GIT_SSH") and not env.get("GIT_SSH_COMMAND"):
        # core.sshCommand (set above) would win over GIT_SSH, but not over GIT_SSH_COMMAND.
        env["GIT_SSH_COMMAND"] = shlex.quote(env["GIT_SSH"])
    return env


def _why(ran: Ran) -> str:
    """The line of git's output that says why it failed: a rejected ref, else fatal or error."""
    lines = [line.strip() for line in ran.stderr.splitlines() if line.strip()]
    rejected = [line for line in lines if "rejected]" in line]
    failed = [line for line in lines if line.startswith(("fatal:", "error:"))]
    picked = (rejected or failed or lines or [f"exit code {ran.code}"])[0]
    return shorten(printable(Redactor()(" ".join(picked.split()))), 300)
