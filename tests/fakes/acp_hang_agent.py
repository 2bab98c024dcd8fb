"""An ACP agent that hangs in its prompt turn, for the timeout test: plain JSON-RPC on stdio with
the standard library only, so it is in its turn within milliseconds of starting (the SDK alone
takes about a second of CPU to import, longer than the test's timeout on a slow or busy machine).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

SESSION = "session-1"


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
    sys.stdout.flush()


def answer(request: dict[str, Any], cwd: list[str]) -> dict[str, Any] | None:
    """The result for a request, or None for the prompt, which never gets one."""
    params = request.get("params") or {}
    if request["method"] == "initialize":  # the client's version is the one we speak
        info = {"name": "hanging-agent", "version": "1.0"}
        return {"protocolVersion": params["protocolVersion"], "agentInfo": info}
    if request["method"] == "session/new":
        cwd.append(params["cwd"])
        return {"sessionId": SESSION}
    if request["method"] == "session/prompt":
        child = subprocess.Popen(["sleep", "60"])
        chunk = {"type": "text", "text": f"pids: {os.getpid()} {child.pid}\n"}
        update = {"sessionUpdate": "agent_message_chunk", "content": chunk}
        send({"method": "session/update", "params": {"sessionId": SESSION, "update": update}})
        return None
    raise ValueError(f"unexpected request {request['method']}")


def main() -> None:
    cwd: list[str] = []
    for line in sys.stdin:
        message = json.loads(line)
        if message.get("method") == "session/cancel":
            if message["params"]["sessionId"] == SESSION and "id" not in message:
                Path(cwd[0], "cancelled").write_text("session/cancel arrived\n")
            continue
        result = answer(message, cwd)
        if result is not None:
            send({"id": message["id"], "result": result})
    while True:  # stdin closed, and still stuck: only a signal ends it
        time.sleep(3600)


if __name__ == "__main__":
    main()
