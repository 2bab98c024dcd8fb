"""The `gh` program as the harness runs it: `$TASKHAND_GH` if set, else `gh`. Only three calls
exist (`auth status`, `pr view`, `pr create`), each in its own process group with a deadline,
its output made printable and free of secrets before any reason quotes it.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import time
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from urllib.parse import urlsplit

from taskhand.delivery import DeliveryError, SetupError
from taskhand.host.process import Capture, Ran, run_group
from taskhand.host.secrets import Redactor
from taskhand.text import printable, shorten

GH_SECONDS = 120.0  # one call; GitHub answers in seconds, a hung network must not hang the run
OUTPUT_LIMIT = 256 * 1024
VARIABLE = "TASKHAND_GH"
INSTALL = f"install the GitHub CLI (https://cli.github.com), or set {VARIABLE} to a stand-in"
LOGIN = "run gh auth login (or set GH_TOKEN), then try again"
NO_PULL_REQUEST = "no pull requests found"  # what `gh pr view BRANCH` says when there is none
# A remote's address as GitHub's hosts spell it: scheme://[user@]host[:port]/owner/repo[.git]
# or the scp form user@host:owner/repo[.git]. A path on disk names no GitHub repository.
_URL = re.compile(r"^[a-z][a-z0-9+.-]*://(?:[^@/]*@)?(?P<host>[^/:]+)(?::\d+)?/(?P<repo>.+)$")
_SCP = re.compile(r"^[^@/:]+@(?P<host>[^/:]+):(?P<repo>.+)$")


def program(env: Mapping[str, str] | None = None) -> list[str]:
    """The command `gh` stands for: `$TASKHAND_GH` (split as a shell would) or gh itself."""
    given = (os.environ if env is None else env).get(VARIABLE, "").strip()
    return shlex.split(given) if given else ["gh"]


def github_repo(url: str) -> str | None:
    """HOST/OWNER/REPO of a remote's address, as `GH_REPO` takes it; None for a path."""
    match = _URL.match(url) or _SCP.match(url)
    if match is None:
        return None
    parts = match["repo"].strip("/").removesuffix(".git").split("/")
    if len(parts) != 2 or not all(parts):
        return None
    return f"{match['host']}/{parts[0]}/{parts[1]}"


def is_web_address(url: str) -> bool:
    """Whether `url` is an http(s) address with a host: the only kind recorded as a pull
    request's, or shown as a link (a `javascript:` one would run in a person's browser)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    return parts.scheme.lower() in ("http", "https") and bool(parts.hostname)


class PullState(StrEnum):
    """A pull request's state, in gh's words."""

    OPEN = "OPEN"
    MERGED = "MERGED"
    CLOSED = "CLOSED"  # closed by a person, unmerged


@dataclass(frozen=True)
class PullRequest:
    url: str
    state: str  # as gh says it: a PullState, or a word of a newer gh


class Gh:
    """The three `gh` calls, run in the user's repository (where gh finds the remote)."""

    def __init__(self, repo: Path, remote_url: str = "", seconds: float = GH_SECONDS) -> None:
        self.repo = repo
        self.argv = program()
        self.name = " ".join(self.argv)
        self.seconds = seconds
        self.redact = Redactor()
        env = dict(os.environ)
        # Never a prompt, a pager, colour or an update notice: nobody is there to answer.
        env.update(
            GH_PROMPT_DISABLED="1",
            GH_NO_UPDATE_NOTIFIER="1",
            GH_SPINNER_DISABLED="1",
            GH_PAGER="cat",
            NO_COLOR="1",
            GIT_TERMINAL_PROMPT="0",
        )
        slug = github_repo(remote_url)
        if slug and not env.get("GH_REPO"):  # the remote pushed to, not gh's own pick
            env["GH_REPO"] = slug
        self.env = env

    def auth_status(self) -> None:
        """Refuse unless gh is installed and logged in."""
        ran = self._call("auth", "status")
        if ran.code != 0:
            raise SetupError(f"{self.name} is not logged in: {self._why(ran)}", fix=LOGIN)

    def pr_view(self, branch: str) -> PullRequest | None:
        """The pull request whose head is `branch`, or None when it has none."""
        ran = self._call("pr", "view", branch, "--json", "url,state")
        if ran.code != 0:
            if NO_PULL_REQUEST in f"{ran.stderr}\n{ran.stdout}".lower():
                return None
            raise DeliveryError(f"gh pr view {branch} failed: {self._why(ran)}")
        try:
            data = json.loads(ran.stdout)
            url, state = str(data["url"]), str(data.get("state") or PullState.OPEN).upper()
        except (ValueError, KeyError, TypeError):
            raise DeliveryError(
                f"gh pr view {branch} printed no address: {self._clean(ran.stdout)}"
            ) from None
        return PullRequest(self._address(url, f"gh pr view {branch}"), state)

    def pr_create(self, base: str, branch: str, title: str, body_file: Path) -> str:
        """Open a pull request of `branch` into `base`; its address."""
        args = ("--base", base, "--head", branch, "--title", title, "--body-file", str(body_file))
        ran = self._call("pr", "create", *args)
        if ran.code != 0:
            raise DeliveryError(f"gh pr create failed: {self._why(ran)}")
        lines = [line.strip() for line in ran.stdout.splitlines() if line.strip()]
        url = next((line for line in reversed(lines) if line.startswith("http")), "")
        if not url:
            raise DeliveryError(f"gh pr create printed no address: {self._why(ran)}")
        return self._address(url, "gh pr create")

    def _call(self, *args: str) -> Ran:
        command = f"{self.name} {' '.join(args[:2])}"
        try:
            ran = run_group(
                [*self.argv, *args],
                self.repo,
                self.env,
                time.monotonic() + self.seconds,
                stdout=Capture(OUTPUT_LIMIT, head=OUTPUT_LIMIT // 2),
                stderr=Capture(OUTPUT_LIMIT, head=0),
            )
        except OSError as exc:
            raise SetupError(f"{self.name} could not start ({exc.strerror})", fix=INSTALL) from None
        if ran.timed_out:
            raise DeliveryError(f"{command} did not answer within {self.seconds:g}s")
        return ran

    def _why(self, ran: Ran) -> str:
        """The line of gh's output that says what went wrong."""
        lines = [line for line in f"{ran.stderr}\n{ran.stdout}".splitlines() if line.strip()]
        return self._clean(lines[0] if lines else f"exit code {ran.code}")

    def _address(self, url: str, command: str) -> str:
        """The pull request's address gh printed, when it is a web address: anything else is
        never recorded (a board would link it)."""
        cleaned = self._clean(url)
        if not is_web_address(cleaned):
            raise DeliveryError(
                f"{command} printed an address that is not http(s): {cleaned}",
                fix="check which gh runs ($TASKHAND_GH, or gh on PATH)",
            )
        return cleaned

    def _clean(self, text: str) -> str:
        return shorten(printable(self.redact(text.strip())), 300)
