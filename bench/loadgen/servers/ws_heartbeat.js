// An echo server on Node's `ws` package with the heartbeat its README teaches ("How to detect
// and close broken connections?"): every INTERVAL_MS each client is pinged, and one that has not
// answered since the previous tick is terminate()d (a bare close, no close frame). loadgen's
// --expect ws-heartbeat --heartbeat INTERVAL judges it (bench/loadgen/third_party.sh).
//
// usage: node ws_heartbeat.js INTERVAL_MS    (listens on 127.0.0.1, a free port; prints
//                                             "listening on port N")
'use strict';
const { WebSocketServer } = require('ws');

const interval = Number(process.argv[2]);
if (!(interval > 0)) {
  console.error('usage: node ws_heartbeat.js INTERVAL_MS');
  process.exit(2);
}

const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });

function heartbeat() {
  this.isAlive = true;
}

wss.on('connection', function connection(ws) {
  ws.isAlive = true;
  ws.on('error', () => {});
  ws.on('pong', heartbeat);
  ws.on('message', (data, isBinary) => ws.send(data, { binary: isBinary }));
});

const timer = setInterval(function ping() {
  wss.clients.forEach(function each(ws) {
    if (ws.isAlive === false) return ws.terminate();
    ws.isAlive = false;
    ws.ping();
  });
}, interval);

wss.on('close', () => clearInterval(timer));
wss.on('listening', () => console.log(`listening on port ${wss.address().port}`));
process.on('SIGTERM', () => {
  clearInterval(timer);
  for (const ws of wss.clients) ws.terminate();
  wss.close(() => process.exit(0));
});
