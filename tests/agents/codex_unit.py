"""One unit of the real `codex` through the cli backend, as a program, so a test can start it
inside a bubblewrap sandbox of its own: `python -m tests.codex_unit ROLE WORKTREE`, with
OPENAI_BASE_URL pointing at a scripted server. Prints the outcome's case and failure as JSON.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from taskhand.agents.cli.backend import CliAgent
from taskhand.unit import Role, Unit

NO_RETRIES = ["-c", "model_providers.taskhand.request_max_retries=0"]


def main() -> None:
    role, worktree = Role(sys.argv[1]), Path(sys.argv[2])
    agent = CliAgent("codex", model="gpt-5", extra_args=NO_RETRIES, outer_sandbox=True)
    outcome = agent.run(Unit(role, "T-001", 1, "Write hello.txt.", worktree, 60.0))
    print(json.dumps({"case": outcome.case.value, "failure": outcome.failure}))


if __name__ == "__main__":
    main()
