"""Deleting a folder an agent had: never following a link, at any depth, through what it did to
keep it (folders made unwritable, files and folders flagged immutable or append-only), and
saying what stayed instead of failing.

Every folder is opened without following a link and entries are removed relative to it, so a
link swapped in anywhere leads nowhere; a tree deeper than the open folders allowed is moved up
to its top as it goes, so depth costs neither recursion nor file descriptors.
"""

from __future__ import annotations

import contextlib
import fcntl
import itertools
import os
import stat
import struct
from dataclasses import dataclass, field
from pathlib import Path

from taskhand.text import printable

_OPEN_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# An open that never blocks (a FIFO) and never follows a link: only to read and clear flags.
_OPEN_ANY = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC
_DEEPEST = 32  # folders held open at once; deeper ones are moved up to the top
# Linux's inode flags (linux/fs.h): `chattr +i` and `chattr +a` stop unlink, rename and rmdir.
_GET_FLAGS, _SET_FLAGS = 0x80086601, 0x40086602
_KEEPING = 0x10 | 0x20  # FS_IMMUTABLE_FL | FS_APPEND_FL


@dataclass
class Removed:
    """What a removal freed (bytes on disk, each file once) and what it could not delete,
    one line each, relative to the removed folder's parent."""

    bytes: int = 0
    left: list[str] = field(default_factory=list)
    _seen: set[tuple[int, int]] = field(default_factory=set, repr=False)

    def count(self, info: os.stat_result) -> None:
        if (info.st_dev, info.st_ino) not in self._seen:
            self._seen.add((info.st_dev, info.st_ino))
            self.bytes += info.st_blocks * 512


def remove_tree(path: Path) -> Removed:
    """Delete `path` (a folder, a file or a link; never what a link points at) and all below
    it; what was freed and what stayed."""
    done = Removed()
    try:
        parent = os.open(path.parent, _OPEN_DIR)
    except FileNotFoundError:
        return done
    except OSError as exc:
        done.left.append(f"{printable(str(path), name=True)}: {exc.strerror}")
        return done
    try:
        remove_entry(parent, path.name, done, shown=path.name)
    finally:
        os.close(parent)
    return done


def remove_entry(parent: int, name: str, done: Removed, shown: str | None = None) -> None:
    """Delete `name` in the open folder `parent`, and all below it, into `done`. `shown` is how
    its lines name it (the name itself by default)."""
    shown = shown or name
    try:
        info = os.stat(name, dir_fd=parent, follow_symlinks=False)
    except FileNotFoundError:
        return
    except OSError as exc:
        done.left.append(f"{printable(shown, name=True)}: {exc.strerror}")
        return
    if stat.S_ISDIR(info.st_mode):
        _empty(parent, name, shown, done)
    _delete(parent, name, info, shown, done)


def _empty(parent: int, name: str, shown: str, done: Removed) -> None:
    """Delete everything in the folder `name`, depth first, without recursion."""
    top = _open_folder(parent, name, shown, done)
    if top is None:
        return
    moved = itertools.count(1)
    # Each level: its open folder, its own name, how its lines name it, the names left in it.
    stack: list[tuple[int, str, str, list[str]]] = [(top, name, shown, _names(top))]
    try:
        while stack:
            folder, own, where, names = stack[-1]
            if not names:  # emptied: closed, and deleted from the level above
                stack.pop()
                os.close(folder)
                if stack:
                    _delete_folder(stack[-1][0], own, where, done)
                continue
            entry = names.pop()
            here = f"{where}/{entry}"
            try:
                info = os.stat(entry, dir_fd=folder, follow_symlinks=False)
            except OSError:
                continue  # gone meanwhile
            if not stat.S_ISDIR(info.st_mode):
                _delete(folder, entry, info, here, done)
            elif len(stack) < _DEEPEST:
                inner = _open_folder(folder, entry, here, done)
                if inner is not None:
                    stack.append((inner, entry, here, _names(inner)))
            else:  # too deep to hold open: moved up to the top, deleted from there
                up = f".taskhand-deep-{next(moved)}"
                while _exists(top, up):
                    up = f".taskhand-deep-{next(moved)}"
                try:
                    os.rename(entry, up, src_dir_fd=folder, dst_dir_fd=top)
                    stack[0][3].append(up)
                except OSError as exc:
                    done.left.append(f"{printable(here, name=True)}: {exc.strerror}")
    finally:
        for folder, _, _, _ in stack:
            os.close(folder)


def _delete_folder(parent: int, name: str, shown: str, done: Removed) -> None:
    try:
        info = os.stat(name, dir_fd=parent, follow_symlinks=False)
    except OSError:
        return
    _delete(parent, name, info, shown, done)


def _exists(folder: int, name: str) -> bool:
    try:
        os.stat(name, dir_fd=folder, follow_symlinks=False)
        return True
    except OSError:
        return False


def _names(folder: int) -> list[str]:
    try:
        return os.listdir(folder)
    except OSError:
        return []


def _open_folder(parent: int, name: str, shown: str, done: Removed) -> int | None:
    """The folder `name` opened (never through a link), made listable and writable for us and
    rid of the flags that keep its entries; None (and a line in `done`) when it cannot be."""
    try:
        folder = os.open(name, _OPEN_DIR, dir_fd=parent)
    except PermissionError:
        try:  # a folder made unreadable: opened up through a handle that is it, not a link
            handle = os.open(name, os.O_PATH | _OPEN_DIR, dir_fd=parent)
            try:
                os.chmod(f"/proc/self/fd/{handle}", 0o700)
            finally:
                os.close(handle)
            folder = os.open(name, _OPEN_DIR, dir_fd=parent)
        except OSError as exc:
            done.left.append(f"{printable(shown, name=True)}: {exc.strerror}")
            return None
    except OSError as exc:
        done.left.append(f"{printable(shown, name=True)}: {exc.strerror}")
        return None
    _unkeep(folder)
    with contextlib.suppress(OSError):
        mode = os.fstat(folder).st_mode
        if mode & 0o700 != 0o700:
            os.fchmod(folder, mode | 0o700)
    return folder


def _delete(parent: int, name: str, info: os.stat_result, shown: str, done: Removed) -> None:
    """Unlink (or, for a folder, rmdir) `name`; once more after clearing its flags and its
    folder's, when the first try was refused."""
    remove = os.rmdir if stat.S_ISDIR(info.st_mode) else os.unlink
    for last in (False, True):
        try:
            remove(name, dir_fd=parent)
            done.count(info)
            return
        except FileNotFoundError:
            return
        except OSError as exc:
            if last:
                done.left.append(f"{printable(shown, name=True)}: {exc.strerror}")
                return
            _unkeep(parent)
            if stat.S_ISREG(info.st_mode) or stat.S_ISDIR(info.st_mode):
                with contextlib.suppress(OSError):
                    entry = os.open(name, _OPEN_ANY, dir_fd=parent)
                    try:
                        _unkeep(entry)
                    finally:
                        os.close(entry)


def _unkeep(fd: int) -> None:
    """Clear the immutable and append-only flags of the open file or folder `fd`, where they
    are set and the harness may (root may; the flags cannot be set without that right)."""
    try:
        raw = fcntl.ioctl(fd, _GET_FLAGS, bytes(8))
        flags = struct.unpack("i", raw[:4])[0]
        if flags & _KEEPING:
            fcntl.ioctl(fd, _SET_FLAGS, struct.pack("i", flags & ~_KEEPING) + bytes(4))
    except OSError:
        pass  # a file system without flags, or no right to change them: the delete says so
