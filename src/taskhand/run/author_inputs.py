"""What `taskhand author` checks before any agent works: the requirement documents (there, not
empty, text, not huge), the output folder, the spec publication, and a file of answers to the
author's questions. Each refusal is one line naming the file and the fix.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from taskhand.errors import UserError
from taskhand.plan import publication
from taskhand.plan.formats.tasktrack import CODE_RE, RESOURCE_COMMA, RESOURCE_COMMA_FIX
from taskhand.plan.model import Dialect
from taskhand.plan.write import check_out_folder
from taskhand.prompts.author import Requirement
from taskhand.text import utf16

# A requirement document larger than this is refused: an author reads each one whole, and a
# document this size is a dump (a log, a database), not requirements. Documented in
# docs/authoring.md.
MAX_DOCUMENT_BYTES = 256 * 1024


class AuthorInputError(UserError):
    """An input of `taskhand author` that cannot be used; the message names it and the fix."""


@dataclass(frozen=True)
class Answer:
    """A person's answer to one question: the letter chosen, and a note."""

    choice: str
    note: str = ""


def read_requirements(
    paths: list[Path], dialect: Dialect = Dialect.MARKDOWN
) -> list[tuple[Path, Requirement]]:
    """Each document's absolute path and text; refuses a missing, empty, binary or huge one,
    and for TaskTrack one whose path its comma-separated Resources field could not hold."""
    if not paths:
        raise AuthorInputError("no requirement documents (fix: name one or more files)")
    found = []
    for path in paths:
        where = str(path)
        if not path.is_file():
            what = "is a folder" if path.is_dir() else "does not exist"
            raise AuthorInputError(f"{what}", where=where, fix="name a requirement file")
        size = path.stat().st_size
        if size > MAX_DOCUMENT_BYTES:
            raise AuthorInputError(
                f"is {size} bytes, over the {MAX_DOCUMENT_BYTES // 1024} KiB a requirement "
                "document may have",
                where=where,
                fix="split it, or pass only the parts the plan is about",
            )
        raw = path.read_bytes()
        if utf16(raw):
            raise AuthorInputError(
                "is UTF-16 text", where=where, fix="save it as UTF-8 (Markdown or plain text)"
            )
        if b"\0" in raw:
            raise AuthorInputError(
                "is binary, not text", where=where, fix="export it as Markdown or plain text"
            )
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise AuthorInputError(
                "is not UTF-8 text", where=where, fix="save it as UTF-8 (Markdown or plain text)"
            ) from None
        if not text.strip():
            raise AuthorInputError("is empty", where=where, fix="write the requirements into it")
        absolute = path.resolve()
        if "," in str(absolute) and dialect is Dialect.TASKTRACK:
            raise AuthorInputError(RESOURCE_COMMA, where=where, fix=RESOURCE_COMMA_FIX)
        found.append((absolute, Requirement(path.name, text)))
    return found


def check_spec(spec: Path | None, dialect: Dialect, repo: Path | None = None) -> Path | None:
    """The TaskTrack publication to copy into the plan: `spec`, else one a TaskTrack plan of
    the repository already holds (taskhand ships none of its own); a Markdown plan takes none."""
    given = publication.checked(spec, dialect)
    if given is not None or dialect is Dialect.MARKDOWN:
        return given
    found = publication.nearby(repo or Path.cwd())
    if found is None:
        raise AuthorInputError(
            "a TaskTrack plan holds a publication of the TaskTrack specification; taskhand "
            "ships none, and no TaskTrack plan of this repository holds one",
            fix="pass --spec TaskTrack-<REVISION>.md, or use --dialect markdown",
        )
    return found


def check_code(code: str, dialect: Dialect) -> str:
    """The plan code a person chose ("" for the author's choice): TaskTrack's alone."""
    if code and dialect is Dialect.MARKDOWN:
        raise AuthorInputError(
            "--code applies to TaskTrack plans", fix="add --dialect tasktrack or drop --code"
        )
    if code and not CODE_RE.match(code):
        raise AuthorInputError(f"plan code {code!r} must be 3 to 5 letters A-Z", fix="--code FOO")
    return code


def check_out(out: Path) -> None:
    """The output folder: new, or an empty folder."""
    try:
        check_out_folder(out)
    except UserError as exc:
        raise AuthorInputError(exc.what, where=exc.where, fix=exc.fix) from None


def read_answers(path: Path | None) -> dict[int, Answer]:
    """A JSON file of answers by question: {"Q1": "a", "Q2": {"choice": "b", "note": "..."}}."""
    if path is None:
        return {}
    fix = 'write a JSON object like {"Q1": "a", "Q2": {"choice": "b", "note": "why"}}'
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise AuthorInputError(f"cannot be read ({exc})", where=str(path), fix=fix) from None
    if not isinstance(data, dict):
        raise AuthorInputError("is not a JSON object", where=str(path), fix=fix)
    answers = {}
    for key, value in data.items():
        number = key[1:] if key[:1] in ("Q", "q") else ""
        entry = value if isinstance(value, dict) else {"choice": value}
        choice, note = entry.get("choice"), entry.get("note", "")
        if not number.isdigit() or not isinstance(choice, str) or not isinstance(note, str):
            raise AuthorInputError(f"answer {key!r} is not usable", where=str(path), fix=fix)
        answers[int(number)] = Answer(choice.strip().lower(), note.strip())
    return answers
