"""A static server for a built site that compresses text with gzip, as a static host does.

Lighthouse scores an uncompressed server several points lower than any real host would be, so the
benchmark serves the site through this one. Headers follow what GitHub Pages sends: gzip for text
types and ``Cache-Control: max-age=600``.
"""

from __future__ import annotations

import functools
import io
import gzip
import http.server
import threading
from pathlib import Path

COMPRESSIBLE = ("text/", "application/javascript", "application/json", "image/svg+xml",
                "application/xml", "text/xml")


class GzipHandler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map,
                      ".js": "application/javascript", ".json": "application/json",
                      ".svg": "image/svg+xml", ".woff2": "font/woff2"}

    def log_message(self, *args):
        pass

    def end_headers(self):
        self.send_header("Cache-Control", "max-age=600")
        super().end_headers()

    def send_head(self):
        path = Path(self.translate_path(self.path))
        if path.is_dir():
            if not self.path.split("?")[0].endswith("/"):
                return super().send_head()  # the parent class redirects to the slash URL
            path = path / "index.html"
        ctype = self.guess_type(str(path))
        wants_gzip = "gzip" in self.headers.get("Accept-Encoding", "")
        if not (path.is_file() and wants_gzip and ctype.startswith(COMPRESSIBLE)):
            return super().send_head()
        body = gzip.compress(path.read_bytes(), compresslevel=6, mtime=0)
        self.send_response(200)
        self.send_header("Content-Type", ctype + ("; charset=utf-8" if ctype.startswith("text/") else ""))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Vary", "Accept-Encoding")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        return io.BytesIO(body)


class GzipServer:
    """``with GzipServer(site_dir) as url:`` serves ``site_dir`` on a free port of 127.0.0.1."""

    def __init__(self, directory: Path | None = None, port: int = 0):
        self.directory = directory
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", port), GzipHandler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/"

    def serve(self, directory: Path) -> str:
        self.httpd.RequestHandlerClass = functools.partial(GzipHandler, directory=str(directory))
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self.url

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self):
        if self.directory is not None:
            self.serve(self.directory)
        return self

    def __exit__(self, *exc):
        self.close()
