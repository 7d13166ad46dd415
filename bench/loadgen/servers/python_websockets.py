#!/usr/bin/python3
"""An echo server on Python's `websockets` (Debian's python3-websockets) with its keepalive:
a ping every PING_INTERVAL, and close code 1011 "keepalive ping timeout" when no pong comes
within PING_TIMEOUT. loadgen's --expect python-websockets --ping-interval P --ping-timeout Q
judges it (bench/loadgen/third_party.sh).

usage: python_websockets.py PING_INTERVAL_S PING_TIMEOUT_S   (listens on 127.0.0.1, a free
                                                              port; prints "listening on port N")
"""
import asyncio
import signal
import sys

import websockets


async def echo(ws, _path=None):
    try:
        async for message in ws:
            await ws.send(message)
    except websockets.ConnectionClosed:
        pass


async def main(ping_interval, ping_timeout):
    stop = asyncio.get_running_loop().create_future()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set_result, None)
    async with websockets.serve(echo, "127.0.0.1", 0, ping_interval=ping_interval, ping_timeout=ping_timeout,
                                max_queue=None) as server:
        print(f"listening on port {server.sockets[0].getsockname()[1]}", flush=True)
        await stop


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    asyncio.run(main(float(sys.argv[1]), float(sys.argv[2])))
