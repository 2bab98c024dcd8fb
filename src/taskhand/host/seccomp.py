"""The seccomp filter every sandboxed process runs under: a few system calls that reach past
the sandbox's walls fail with EPERM, everything else is allowed.

Denied: typing into a terminal (`ioctl` TIOCSTI and TIOCLINUX), reading or steering another
process (`ptrace`, `process_vm_readv`/`writev`, `pidfd_getfd`, `kcmp`), the kernel keyrings
(shared by all of a user's processes), `perf_event_open`, `bpf` and `userfaultfd`; on x86-64,
the x32 system call numbers and any other architecture's (a second table the list would miss).

The program is classic BPF, built here so no library is needed; bubblewrap loads it
(`--seccomp FD`) after setting up the sandbox, and `no_new_privs` keeps it for every child.
"""

from __future__ import annotations

import errno
import functools
import os
import platform
import struct

# Offsets in struct seccomp_data: int nr; u32 arch; u64 instruction_pointer; u64 args[6].
_NR, _ARCH, _ARG1_LOW = 0, 4, 24  # args[1]'s low half on a little-endian machine

_LD_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_RET = 0x06  # BPF_RET | BPF_K
_ALLOW = 0x7FFF0000
_DENY = 0x00050000 | errno.EPERM  # SECCOMP_RET_ERRNO

_TIOCSTI, _TIOCLINUX = 0x5412, 0x541C
_X32_BIT = 0x40000000

_ARCHES: dict[str, tuple[int, dict[str, int]]] = {
    "x86_64": (
        0xC000003E,
        {
            "ioctl": 16,
            "ptrace": 101,
            "process_vm_readv": 310,
            "process_vm_writev": 311,
            "pidfd_getfd": 438,
            "kcmp": 312,
            "add_key": 248,
            "request_key": 249,
            "keyctl": 250,
            "perf_event_open": 298,
            "bpf": 321,
            "userfaultfd": 323,
        },
    ),
    "aarch64": (
        0xC00000B7,
        {
            "ioctl": 29,
            "ptrace": 117,
            "process_vm_readv": 270,
            "process_vm_writev": 271,
            "pidfd_getfd": 438,
            "kcmp": 272,
            "add_key": 217,
            "request_key": 218,
            "keyctl": 219,
            "perf_event_open": 241,
            "bpf": 280,
            "userfaultfd": 282,
        },
    ),
}


# One instruction: its label (or None), opcode, operand, and the labels jumped to when the
# test holds and when it does not (None: the next instruction).
_Line = tuple[str | None, int, int, str | None, str | None]


def _assemble(lines: list[_Line]) -> bytes:
    at = {label: n for n, (label, *_) in enumerate(lines) if label}

    def jump(n: int, target: str | None) -> int:
        return 0 if target is None else at[target] - n - 1

    return b"".join(
        struct.pack("<HBBI", code, jump(n, jt), jump(n, jf), k)
        for n, (_, code, k, jt, jf) in enumerate(lines)
    )


def program(machine: str | None = None) -> bytes | None:
    """The filter for `machine` (default: this one), or None where it has no table here."""
    found = _ARCHES.get(machine or platform.machine())
    if found is None:
        return None
    arch, numbers = found
    lines: list[_Line] = [
        (None, _LD_ABS, _ARCH, None, None),
        # Another architecture's calls (i386 through int 0x80) carry other numbers: denied.
        (None, _JEQ, arch, None, "deny"),
        (None, _LD_ABS, _NR, None, None),
    ]
    if arch == _ARCHES["x86_64"][0]:
        lines.append((None, _JGE, _X32_BIT, "deny", None))
    lines += [(None, _JEQ, nr, "deny", None) for name, nr in numbers.items() if name != "ioctl"]
    lines += [
        (None, _JEQ, numbers["ioctl"], "ioctl", None),
        (None, _RET, _ALLOW, None, None),
        ("ioctl", _LD_ABS, _ARG1_LOW, None, None),
        (None, _JEQ, _TIOCSTI, "deny", None),
        (None, _JEQ, _TIOCLINUX, "deny", None),
        (None, _RET, _ALLOW, None, None),
        ("deny", _RET, _DENY, None, None),
    ]
    return _assemble(lines)


@functools.lru_cache(maxsize=4)
def _memfd(pid: int) -> int | None:
    code = program()
    if code is None or not hasattr(os, "memfd_create"):
        return None
    fd = os.memfd_create("taskhand-seccomp", os.MFD_CLOEXEC)
    os.write(fd, code)
    return fd


def source() -> str | None:
    """A path that opens the filter afresh (each opener reads it from the start), or None
    where this machine has no filter: the launcher hands bubblewrap a descriptor of it."""
    pid = os.getpid()  # a forked child makes its own: the parent's descriptor is not its
    fd = _memfd(pid)
    return None if fd is None else f"/proc/{pid}/fd/{fd}"
