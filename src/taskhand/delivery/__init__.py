"""Delivery: finished work leaves the run as a pull request, by the harness alone (no agent, no
tokens). `contract` checks the branch, `body` writes the pull request's text, `remote` pushes,
`gh` asks GitHub, `ship` runs the steps durably, `preflight` checks the setup before a run.

Nothing here ever merges: the only `gh` calls are `auth status`, `pr view` and `pr create`.
"""

from __future__ import annotations

from taskhand.errors import UserError


class DeliveryError(UserError):
    """A delivery step that failed; `what` is the reason a task shows as `deliver: <reason>`."""


class SetupError(DeliveryError):
    """A setup in which no delivery could work (no remote, no `gh`, logged out, no base on
    the remote): a run refuses to start, and the command line exits 2 with the fix."""

    exit_code = 2
