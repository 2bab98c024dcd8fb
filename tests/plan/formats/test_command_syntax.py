"""Shell syntax in check commands: found outside quotes, ignored inside them."""

from __future__ import annotations

import pytest

from taskhand.plan.formats.command_syntax import runs_through_shell, shell_syntax


@pytest.mark.parametrize(
    ("command", "found"),
    [
        ("pytest -q | tee out", [("|", "a pipe", True)]),
        ("a || b", [("||", "an 'or' list", True)]),
        ("true && false", [("&&", "an 'and' list", True)]),
        ("make; echo", [(";", "a command separator", True)]),
        ("serve &", [("&", "a background job", True)]),
        ("cmd >> log", [(">>", "a redirection", True)]),
        ("cmd 2>&1", [("2>&1", "a redirection", True)]),
        ("cmd <in.txt", [("<in.txt", "a redirection", True)]),
        ("echo $(date)", [("$(date)", "a command substitution", True)]),
        ("echo `date`", [("`date`", "a command substitution", True)]),
        ("pytest -q # quick", [("#", "a comment", True)]),
        ("CI=1 pytest", [("CI=1", "a variable assignment", True)]),
        ("echo $HOME", [("$HOME", "a variable", False)]),
        ('echo "${HOME}/x"', [("${HOME}", "a variable", False)]),
        ("ls ~/bin", [("~/bin", "a tilde", False)]),
        ("pytest tests/*.py", [("tests/*.py", "a glob", False)]),
        ("grep -q 'a|b' file", []),
        ('grep -q "a && b" file', []),
        ("echo '$HOME' '`x`'", []),
        ("find . -exec rm {} \\;", []),
        ("grep -c '^$' f", []),
        ("x a\\|b", []),
        ("'CI=1' pytest", []),
        ("python3 -c 'import sys; sys.exit(1)'", []),
        ("python3 -m unittest tests/test_cli.py", []),
    ],
)
def test_shell_syntax_outside_quotes(command: str, found: list[tuple[str, str, bool]]) -> None:
    assert [(s.text, s.what, s.changes_what_runs) for s in shell_syntax(command)] == found


def test_a_shell_the_check_starts_expands_its_own_quotes() -> None:
    argv = ("sh", "-c", "echo $HOME")
    assert runs_through_shell(argv) and not runs_through_shell(("python3", "-c", "x"))
    assert shell_syntax('sh -c "echo $HOME"', through_shell=True) == []
    assert [s.text for s in shell_syntax('sh -c "echo $HOME" | cat', through_shell=True)] == ["|"]
