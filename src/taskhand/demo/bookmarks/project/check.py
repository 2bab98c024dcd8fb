"""The bookmarks page's checks: `python3 check.py NAME` runs the check called NAME."""

import pathlib
import sys

PAGE = pathlib.Path(__file__).with_name("index.html").read_text()


def page() -> None:
    assert '<ul id="list">' in PAGE, "the list is gone"


CHECKS = {"page": page}

if __name__ == "__main__":
    CHECKS[sys.argv[1]]()
    print(f"{sys.argv[1]}: ok")
