"""The environment a child process gets (an agent, a check, an agent's shell): built from an
allow-list of names, never the user's environment minus the names that look secret.

Every child gets BASE; an agent's program also gets NETWORK and the variables its backend
declares; every child gets the names the plan passes in its taskhand.toml (`[env] pass`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

# What any program needs to start and behave: where programs and home are, who the user is,
# the language, time zone and temporary folder, the terminal's kind and size, the wish for no
# colour, and the XDG folders (locations only: programs that honour them find their own files).
BASE = (
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "TERM",
    "LANG",
    "LANGUAGE",
    "LC_*",
    "TZ",
    "TMPDIR",
    "NO_COLOR",
    "COLUMNS",
    "LINES",
    "XDG_CONFIG_HOME",
    "XDG_CACHE_HOME",
    "XDG_DATA_HOME",
    "XDG_STATE_HOME",
    "XDG_RUNTIME_DIR",
)
# How an agent's program reaches its provider: proxies and certificate authorities. Checks do
# not get them unless the plan passes them (a proxy's URL may carry a password).
NETWORK = (
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
    "no_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
    "NODE_EXTRA_CA_CERTS",
)


def child_env(
    backend: Iterable[str] = (),
    passed: Iterable[str] = (),
    env: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The variables of `env` (default os.environ) named in BASE, `backend` or `passed`.

    An entry ending in `*` names a prefix (`LC_*`, `ANTHROPIC_*`); names are matched exactly,
    case included, as the operating system does.
    """
    source = os.environ if env is None else env
    wanted = [*BASE, *backend, *passed]
    names = {w for w in wanted if not w.endswith("*")}
    prefixes = tuple(w[:-1] for w in wanted if w.endswith("*"))
    return {
        name: value
        for name, value in source.items()
        if name in names or (prefixes and name.startswith(prefixes))
    }


def agent_env(
    backend: Iterable[str] = (),
    passed: Iterable[str] = (),
    env: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """What an agent's own program gets: BASE, NETWORK, its backend's variables, the plan's."""
    return child_env((*NETWORK, *backend), passed, env)
