"""A small HTTP/1.0 server for capturing load-tool output on 127.0.0.1 (tests/data/README.md, latency/).

    python3 slow_server.py PORT MODE

MODE ``spread``: answers after a delay that cycles through 0, 10, ..., 90 ms, and every 8th request after
300 ms (slow answers with a known spread); ``hold``: answers after 2 s (connections pile up);
``reset``: resets every third connection (SO_LINGER 0) after reading its request, answers the others at
once. Every answer is ``ok\\n`` with ``Connection: close``. Stops by itself after 120 s.
"""

import socket
import struct
import sys
import threading
import time

RESPONSE = (
    b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 3\r\nConnection: close\r\n\r\nok\n"
)


def delay_s(mode: str, n: int) -> float:
    if mode == "hold":
        return 2.0
    if mode == "spread":
        return 0.3 if n % 8 == 7 else (n % 10) * 0.01
    return 0.0


def serve(conn: socket.socket, mode: str, n: int) -> None:
    try:
        conn.recv(65536)
        if mode == "reset" and n % 3 == 2:
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            return
        time.sleep(delay_s(mode, n))
        conn.sendall(RESPONSE)
    except OSError:
        pass
    finally:
        conn.close()


def main() -> None:
    port, mode = int(sys.argv[1]), sys.argv[2]
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(1024)
    listener.settimeout(1.0)
    deadline = time.monotonic() + 120
    n = 0
    while time.monotonic() < deadline:
        try:
            conn, _ = listener.accept()
        except TimeoutError:
            continue
        threading.Thread(target=serve, args=(conn, mode, n), daemon=True).start()
        n += 1


if __name__ == "__main__":
    main()
