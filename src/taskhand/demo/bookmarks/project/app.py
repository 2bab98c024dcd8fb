"""The bookmarks app: serves this folder on 127.0.0.1 at $PORT (8000 without one)."""

import functools
import http.server
import os

handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=os.getcwd())
address = ("127.0.0.1", int(os.environ.get("PORT", "8000")))
server = http.server.ThreadingHTTPServer(address, handler)
server.serve_forever()
