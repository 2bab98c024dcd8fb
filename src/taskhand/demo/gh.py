"""A stand-in for the GitHub CLI, for the full demo and the tests: the three calls taskhand
makes, against a bare repository on disk as the remote. Run it as `$TASKHAND_GH`
("python -m taskhand.demo.gh", or the path of this file).

    FAKE_GH_STATE    a folder: calls.jsonl (each call's argv, in order) and prs.json (the
                     pull requests opened, so `pr view` finds what `pr create` made)
    FAKE_GH_REMOTE   the bare repository: `pr create` refuses a head or base it lacks
    FAKE_GH_LOGGED_OUT=1    `auth status` fails as gh does when nobody is logged in
    FAKE_GH_FAIL=CALL       CALL ("auth status", "pr view", "pr create") fails, every time;
                            "pr create:after" opens the pull request, then fails (a lost answer)
    FAKE_GH_FAIL_ONCE=CALL  the first such call fails, the later ones answer (an outage)
    FAKE_GH_KILL=CALL       the first such call SIGKILLs its parent (taskhand) and ends:
                            "pr view" before it answers, "pr create:after" once it opened one
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

HOST = "https://github.example/owner/project/pull"


def main(argv: list[str]) -> int:
    state = Path(os.environ["FAKE_GH_STATE"])
    state.mkdir(parents=True, exist_ok=True)
    with (state / "calls.jsonl").open("a", encoding="utf-8") as log:
        log.write(json.dumps({"argv": argv, "gh_repo": os.environ.get("GH_REPO", "")}) + "\n")
    call = " ".join(argv[:2])
    if os.environ.get("FAKE_GH_FAIL") == call or _first(state, "FAKE_GH_FAIL_ONCE", call):
        print("HTTP 502: Bad Gateway (https://api.github.example/graphql)", file=sys.stderr)
        return 1
    _kill_if(state, call)
    if call == "auth status":
        if os.environ.get("FAKE_GH_LOGGED_OUT"):
            print("You are not logged into any GitHub hosts. To log in, run: gh auth login")
            return 1
        print("github.example\n  ✓ Logged in to github.example account tester")
        return 0
    if call == "pr view":
        return _view(state, argv[2])
    if call == "pr create":
        opened = _create(state, _options(argv[2:]))
        if opened and os.environ.get("FAKE_GH_FAIL") == "pr create:after":
            print("HTTP 504: Gateway Timeout", file=sys.stderr)
            return 1
        _kill_if(state, "pr create:after")
        return 0 if opened else 1
    print(f"the stand-in gh does not do {call!r}", file=sys.stderr)
    return 2


def _kill_if(state: Path, point: str) -> None:
    if _first(state, "FAKE_GH_KILL", point):
        os.kill(os.getppid(), signal.SIGKILL)
        sys.exit(137)


def _first(state: Path, variable: str, point: str) -> bool:
    """Whether `point` is the one `variable` names, reached for the first time."""
    marker = state / f"{variable.lower()}-{point.replace(' ', '-').replace(':', '-')}"
    if os.environ.get(variable) != point or marker.exists():
        return False
    marker.write_text("reached\n")
    return True


def _view(state: Path, branch: str) -> int:
    found = [pr for pr in prs(state) if pr["head"] == branch]
    if not found:
        print(f'no pull requests found for branch "{branch}"', file=sys.stderr)
        return 1
    print(json.dumps({"url": found[-1]["url"], "state": found[-1]["state"]}))
    return 0


def _create(state: Path, options: dict[str, str]) -> bool:
    head, base = options["--head"], options["--base"]
    for pr in prs(state):
        if pr["head"] == head and pr["state"] == "OPEN":
            print(f'a pull request for branch "{head}" into branch "{base}" already exists:')
            print(pr["url"])
            return False
    for branch in (head, base):
        if not _on_remote(branch):
            print(f"pull request create failed: GraphQL: no branch {branch!r}", file=sys.stderr)
            return False
    known = prs(state)
    url = f"{HOST}/{len(known) + 1}"
    body = Path(options["--body-file"]).read_text(encoding="utf-8")
    pr = {"url": url, "head": head, "base": base, "title": options["--title"], "body": body}
    known.append({**pr, "state": "OPEN"})
    (state / "prs.json").write_text(json.dumps(known, indent=1))
    print(url)
    return True


def _on_remote(branch: str) -> bool:
    remote = os.environ.get("FAKE_GH_REMOTE")
    if not remote:
        return True
    ref = f"refs/heads/{branch}"
    argv = ["git", "--git-dir", remote, "rev-parse", "--verify", "-q", ref]
    done = subprocess.run(argv, capture_output=True, check=False)
    return done.returncode == 0


def _options(args: list[str]) -> dict[str, str]:
    return dict(zip(args[0::2], args[1::2], strict=False))


def prs(state: Path) -> list[dict[str, Any]]:
    path = state / "prs.json"
    return list(json.loads(path.read_text())) if path.exists() else []


def calls(state: Path) -> list[list[str]]:
    path = state / "calls.jsonl"
    if not path.exists():
        return []
    return [json.loads(line)["argv"] for line in path.read_text().splitlines()]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
