"""Landing a candidate on a run branch that moved since its base (another job's task landed
meanwhile): the candidate's change replayed onto the branch's head as one new commit, or the
paths where it conflicts with what landed. Read and written with `git merge-tree`, into the
run's depot: no checkout, no index, nothing of the user's touched.
"""

from __future__ import annotations

from dataclasses import dataclass

# git's helpers are called through the module, so a wrapper on git.run (the benchmark's
# counter of git processes) sees these calls too.
from taskhand.workspace import git
from taskhand.workspace.depot import Depot


@dataclass(frozen=True)
class Replayed:
    """The candidate's change on the new head (`sha`), or where it conflicts (`conflicts`)."""

    sha: str | None
    conflicts: list[str]


def onto(depot: Depot, candidate: str, head: str) -> Replayed:
    """`candidate` (one commit on a base that `head` descends from) replayed onto `head`:
    the three-way merge of the two from their base, committed with the candidate's message
    into the depot."""
    repo = depot.repo
    into = depot.args()
    # Named in the user's repository: through the depot, only full shas mean the same.
    head, candidate = git.resolve(repo, head), git.resolve(repo, candidate)
    merge = [*into, "merge-tree", "--write-tree", "--name-only", "--no-messages", "-z"]
    merge += [head, candidate]
    done = git.run(repo, *merge, ok=(0, 1))
    tree, *paths = [p for p in git.decode(done.stdout).split("\0") if p]
    if done.returncode == 1:
        return Replayed(None, sorted(set(paths)))
    message = git.decode(git.run(repo, "log", "-1", "--format=%B", candidate).stdout)
    made = git.commit_tree(repo, tree, head, message, into=into)
    return Replayed(made, [])
