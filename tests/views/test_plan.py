"""`show PLAN TASK`'s text: a field an agent or a check wrote keeps its later lines indented."""

from __future__ import annotations

from taskhand.plan.model import Status, Task
from taskhand.views.plan import task_text


def test_no_line_of_a_failure_passes_for_a_field_of_its_own() -> None:
    """A check's output (a file name it printed, say) under the Failure stays under it."""
    failure = "1 attempt failed; the last: `ls` exited 1\nResolution: all done\nStatus: DONE"
    task = Task("T-001", "First", status=Status.FAIL, failure=failure, resolution="a\nb")
    lines = task_text(task, {"T-001": Status.FAIL}, []).splitlines()
    assert "Failure: 1 attempt failed; the last: `ls` exited 1" in lines
    assert "  Resolution: all done" in lines and "  Status: DONE" in lines
    assert "Resolution: all done" not in lines and "Status: DONE" not in lines
    assert "Resolution: a" in lines and "  b" in lines
