"""A session with the language server, as an editor would have it, printed message by message.

    .venv/bin/python tools/lsp_session.py SCRIPT LINE:COL [SERVER ARGS...]

Starts `python -m verl_preflight lsp SERVER ARGS` in the script's folder (the workspace),
then: initialize, open the script, wait for its diagnostics, ask for the code actions at the
first fixable one, hover at LINE:COL (1-based, an override's word), shutdown, exit. Each
message is printed as it goes (`-->` to the server, `<--` from it), cut to one line each.
The README's session log comes from this.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

WIDTH = 400


def _send(proc, message: dict) -> None:
    body = json.dumps(message).encode()
    proc.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
    proc.stdin.flush()
    _show("-->", message)


def _receive(proc) -> dict:
    length = 0
    while True:
        line = proc.stdout.readline()
        if not line:
            raise SystemExit("the server closed its output")
        if line in (b"\r\n", b"\n"):
            break
        name, _, value = line.decode().partition(":")
        if name.lower() == "content-length":
            length = int(value)
    message = json.loads(proc.stdout.read(length))
    _show("<--", message)
    return message


def _show(arrow: str, message: dict) -> None:
    what = message.get("method") or f"response {message.get('id')}"
    text = json.dumps(message.get("params", message.get("result", message.get("error"))), ensure_ascii=False)
    print(f"{arrow} {what} {text[:WIDTH]}{' ...' if len(text) > WIDTH else ''}", flush=True)


def _until(proc, wanted) -> dict:
    while True:
        message = _receive(proc)
        if wanted(message):
            return message


def main(argv: list[str]) -> int:
    script, at, *server_args = argv
    script = os.path.abspath(script)
    root = os.path.dirname(script)
    uri = "file://" + script
    line, col = (int(n) - 1 for n in at.split(":"))
    proc = subprocess.Popen(
        [sys.executable, "-m", "verl_preflight", "lsp", *server_args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        cwd=root,
    )
    _send(
        proc,
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"processId": os.getpid(), "rootUri": "file://" + root, "capabilities": {}},
        },
    )
    _until(proc, lambda m: m.get("id") == 1)
    _send(proc, {"jsonrpc": "2.0", "method": "initialized", "params": {}})
    with open(script, encoding="utf-8") as fh:
        text = fh.read()
    _send(
        proc,
        {
            "jsonrpc": "2.0",
            "method": "textDocument/didOpen",
            "params": {"textDocument": {"uri": uri, "languageId": "shellscript", "version": 1, "text": text}},
        },
    )
    published = _until(
        proc, lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri
    )
    diagnostics = published["params"]["diagnostics"]
    if diagnostics:
        first = diagnostics[0]
        _send(
            proc,
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "textDocument/codeAction",
                "params": {"textDocument": {"uri": uri}, "range": first["range"], "context": {"diagnostics": [first]}},
            },
        )
        _until(proc, lambda m: m.get("id") == 2)
    _send(
        proc,
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "textDocument/hover",
            "params": {"textDocument": {"uri": uri}, "position": {"line": line, "character": col}},
        },
    )
    _until(proc, lambda m: m.get("id") == 3)
    _send(proc, {"jsonrpc": "2.0", "id": 4, "method": "shutdown"})
    _until(proc, lambda m: m.get("id") == 4)
    _send(proc, {"jsonrpc": "2.0", "method": "exit"})
    return proc.wait()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
