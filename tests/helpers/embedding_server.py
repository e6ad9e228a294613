"""A local stand-in for an OpenAI-compatible embedding server (text-embeddings-inference, vLLM,
llama.cpp all serve `POST /v1/embeddings`), run as its own process on 127.0.0.1.

Its vectors are hashed bags of words (64 dimensions): a real, deterministic embedding in which
texts sharing words are near, so searches through it rank sensibly, at no model's cost. What
the tests need to steer is read from a JSON control file at each request, so a test changes
the server's behaviour while it runs:

    {"fail": [[503, 2]], "retry_after": "0", "delay_s": 0.0, "max_batch": 0}

`fail` is a queue of [status, count]: the next `count` requests answer `status` (429 and 503
with Retry-After). `max_batch` refuses larger batches with 413, as servers with a batch limit
do. Every answered request is appended to the log file as one JSON line: the number of inputs,
a digest of each, the status, the time.

    python tests/helpers/embedding_server.py PORT CONTROL_FILE LOG_FILE
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

DIMENSIONS = 64
MODEL = "stand-in-bow"
LOCK = threading.Lock()


def embed(text: str) -> list[float]:
    vector = [0.0] * DIMENSIONS
    for word in re.findall(r"[a-z0-9]+", text.lower()):
        digest = hashlib.sha256(word.encode()).digest()
        vector[digest[0] % DIMENSIONS] += 1.0 if digest[1] % 2 else -1.0
    norm = math.sqrt(sum(v * v for v in vector)) or 1.0
    return [v / norm for v in vector]


class Handler(BaseHTTPRequestHandler):
    control: Path
    log_file: Path

    def log_message(self, format: str, *args: object) -> None:
        pass

    def _control(self) -> dict:
        try:
            return json.loads(self.control.read_text() or "{}")
        except (OSError, ValueError):
            return {}

    def _take_failure(self) -> int:
        with LOCK:
            control = self._control()
            queue = control.get("fail") or []
            if not queue:
                return 0
            status, count = queue[0]
            if count <= 1:
                queue.pop(0)
            else:
                queue[0] = [status, count - 1]
            control["fail"] = queue
            self.control.write_text(json.dumps(control))
            return int(status)

    def _answer(
        self, status: int, body: dict, texts: list[str], headers: dict | None = None
    ) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)
        with LOCK, self.log_file.open("a") as log:
            digests = [hashlib.sha256(t.encode()).hexdigest()[:16] for t in texts]
            line = {"inputs": len(texts), "texts": digests, "status": status, "at": time.time()}
            log.write(json.dumps(line) + "\n")

    def do_POST(self) -> None:
        if self.path.rstrip("/") != "/v1/embeddings":
            self._answer(404, {"error": {"message": f"no route {self.path}"}}, [])
            return
        length = int(self.headers.get("Content-Length") or 0)
        request = json.loads(self.rfile.read(length))
        inputs = request.get("input")
        texts = [inputs] if isinstance(inputs, str) else list(inputs or [])
        control = self._control()
        if control.get("delay_s"):
            time.sleep(float(control["delay_s"]))
        failure = self._take_failure()
        if failure:
            retry = {"Retry-After": str(control.get("retry_after", "0"))}
            extra = retry if failure in (429, 503) else {}
            message = {"error": {"message": f"stand-in failure {failure}"}}
            self._answer(failure, message, texts, extra)
            return
        if request.get("model") != MODEL:
            message = f"model '{request.get('model')}' not found; this server serves {MODEL}"
            self._answer(404, {"error": {"message": message}}, texts)
            return
        if control.get("max_batch") and len(texts) > control["max_batch"]:
            self._answer(413, {"error": {"message": "batch too large"}}, texts)
            return
        # Answered out of order, as the API allows: the client must sort by index.
        data = [
            {"object": "embedding", "index": i, "embedding": embed(text)}
            for i, text in enumerate(texts)
        ]
        body = {"object": "list", "model": MODEL, "data": data[::-1]}
        self._answer(200, body, texts)


def main() -> None:
    port, control, log_file = int(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    Handler.control, Handler.log_file = control, log_file
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    print("ready", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
