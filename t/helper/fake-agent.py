#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# A fake palloc agent for the tests: any process can bind a socket named
# like an agent's and answer what it likes (t/4058, t/4059).
"""fake-agent.py SOCKET MODE [ARG]

SOCKET: the path to bind; "{pid}" in it becomes this process's pid.
Once listening it creates SOCKET.ready (with the pid in it) and serves
connections one after another until killed. MODE:
  file RESPONSE     answer each request with the bytes of file RESPONSE
  trickle RESPONSE  the same, one byte every 0.5 s
  huge N            a 200 answer with Content-Length N, then N zero bytes
  huge-nolen N      the same without Content-Length
"""
import os
import socket
import sys
import time


def serve(conn, mode, arg):
    conn.settimeout(5)
    try:
        conn.recv(4096)
    except OSError:
        pass
    if mode in ("file", "trickle"):
        with open(arg, "rb") as f:
            data = f.read()
        if mode == "file":
            conn.sendall(data)
            return
        for i in range(len(data)):
            conn.sendall(data[i:i + 1])
            time.sleep(0.5)
        return
    n = int(arg)
    head = "HTTP/1.0 200 OK\r\nContent-Type: application/octet-stream\r\n"
    if mode == "huge":
        head += "Content-Length: %d\r\n" % n
    conn.sendall((head + "\r\n").encode())
    chunk = bytes(1 << 20)
    while n > 0:
        k = min(n, len(chunk))
        conn.sendall(chunk[:k])
        n -= k


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    path, mode, arg = sys.argv[1], sys.argv[2], sys.argv[3]
    path = path.replace("{pid}", str(os.getpid()))
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    s.listen(16)
    with open(path + ".ready", "w") as f:
        f.write("%d\n" % os.getpid())
    while True:
        conn, _ = s.accept()
        try:
            serve(conn, mode, arg)
        except OSError:
            pass
        finally:
            conn.close()


main()
