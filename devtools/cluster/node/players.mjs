// The cluster drill's second checker (docs/SCALING.md): players written in Node.js from
// docs/PROTOCOL.md alone, beside the Python ones (devtools/rolling.py), so that the drill's
// figures are not one client's view of the site. Every frame a socket receives is checked
// against docs/protocol.schema.json (the generated schema, not the Python checker's reading of
// PROTOCOL.md).
//
//   node players.mjs ws://ADDRESS:PORT path/to/protocol.schema.json
//
// The drill's players' process (devtools/cluster/players.py) makes the games and hands them
// out on stdin, one JSON line each: {"game", "table", "cookies": {"1", "2"}, "spectators",
// "rate"}; a line {"stop": true} tells every game to finish the move in hand. What happens is
// written on stdout, one JSON line a fact ({"kind": "acked", ...}: the kinds below), with the
// times in seconds of CLOCK_MONOTONIC (Python's time.monotonic() on the same machine).
//
// Each socket behaves as the site's pages do (static/js/socket.js): back after a close,
// resuming from the last version seen once a snapshot gave one; after `restarting`, a new
// socket first and the old one closed; a move without an answer sent again on the new
// socket (a played move is answered `duplicate`); and the heartbeat: a ping after 3 s
// without a frame, the socket given up 2 s later (then 4, 8, up to 16 s) if nothing came.

import fs from 'node:fs';
import readline from 'node:readline';

import Ajv from 'ajv';
import WebSocket from 'ws';

const QUIET_MS = 3000;
const ANSWER_MS = 2000;
const ANSWER_MOST_MS = 16000;
const RETRY_MS = 500;
const RESTART_SPREAD_MS = 500;
const LAST_EVENTS_MS = 20000;
const ANSWER_WITHIN_MS = 60000;

const [base, schemaPath] = process.argv.slice(2);
if (!base || !schemaPath) {
  process.stderr.write('usage: node players.mjs ws://ADDRESS:PORT protocol.schema.json\n');
  process.exit(2);
}

// One validator a frame type: an undocumented frame is reported with what is wrong with it.
const frames = JSON.parse(fs.readFileSync(schemaPath, 'utf8')).game_socket_frames;
const ajv = new Ajv({ strict: false, allErrors: true });
const validators = new Map();
for (const { $ref } of frames.anyOf) {
  const name = $ref.split('/').pop();
  const [type] = frames.$defs[name].properties.type.enum;
  validators.set(type, ajv.compile({ $defs: frames.$defs, $ref }));
}

function problem(frame) {
  if (frame === null || typeof frame !== 'object' || Array.isArray(frame)) return 'not an object';
  const validate = validators.get(frame.type);
  if (!validate) return `no frame of type ${JSON.stringify(frame.type)} on a game socket`;
  return validate(frame) ? null : ajv.errorsText(validate.errors);
}

const now = () => Number(process.hrtime.bigint()) / 1e9;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const tell = (fact) => process.stdout.write(`${JSON.stringify(fact)}\n`);
let nextId = 1;
let stopping = false;
let checked = 0;

class Seat {
  constructor(role, game, cookie, table) {
    Object.assign(this, { role, game, cookie, table });
    this.v = 0;
    this.view = null;
    this.viewed = null; // resolves once a snapshot came
    this.heard = new Map(); // ply after a move -> when its event came
    this.stated = -1; // the highest ply a snapshot brought
    this.socket = null;
    this.ends = new Map(); // socket -> its close code, once it closes
    this.closing = false;
    this.patience = 0;
    this.answers = new Map(); // request id -> resolve
    this.listeners = new Set(); // called at each frame
    this.opened = new Promise((resolve) => { this.markOpen = resolve; });
    this.snapshot = new Promise((resolve) => { this.markViewed = resolve; });
  }

  note(what) {
    tell({ kind: 'trace', at: now(), table: this.table, what: `${this.role}: ${what}` });
  }

  dial(query) {
    return new Promise((resolve) => {
      const socket = new WebSocket(`${base}/ws/games/${this.game}/${query}`, {
        headers: this.cookie ? { Cookie: this.cookie } : {},
        origin: base.replace(/^ws/, 'http'),
        handshakeTimeout: 30000,
      });
      // Listening from the start: a frame that came in the same read as the handshake's answer
      // is emitted before the caller, resumed after the 'open', can listen (the snapshot lost
      // so left a game waiting for it forever). Frames wait here until the seat takes the
      // socket as its own.
      const early = [];
      socket.on('message', (data) => (socket.deliver ? socket.deliver(data) : early.push(data)));
      socket.early = early;
      socket.once('open', () => resolve(socket));
      socket.once('close', () => resolve(null));
      // Every failure (refused, reset, a bad handshake) ends in a close, which the page's loop
      // handles; an 'error' without a listener would end the process.
      socket.on('error', () => resolve(null));
    });
  }

  // Open sockets until the game ends: the page's own loop.
  async run() {
    let first = true;
    let closedAt = 0;
    while (!this.closing) {
      if (this.socket === null) {
        const query = first || this.view === null ? '' : `?v=${this.v}`;
        const socket = await this.dial(query);
        if (this.closing) { socket?.terminate(); return; }
        if (socket === null) {
          await sleep(RETRY_MS * (0.75 + Math.random() / 2));
          continue;
        }
        if (!first) tell({ kind: 'reconnect', seconds: now() - closedAt });
        first = false;
        this.note(`socket open (${query || 'snapshot'})`);
        this.adopt(socket);
      }
      const socket = this.socket;
      const code = await this.ends.get(socket);
      this.ends.delete(socket);
      if (this.closing) return;
      if (this.socket !== socket) continue; // moved to another process: read the new socket
      this.socket = null;
      closedAt = now();
      tell({ kind: 'close', code });
      this.note(`socket closed ${code}`);
      await sleep(code === 1012 ? Math.random() * RESTART_SPREAD_MS : RETRY_MS * (0.75 + Math.random() / 2));
    }
  }

  // Make `socket` this seat's socket: read it, and keep the heartbeat on it until it closes.
  adopt(socket) {
    this.socket = socket;
    this.markOpen();
    this.ends.set(socket, new Promise((resolve) => {
      let lastFrame = Date.now();
      let pinged = false;
      const heartbeat = setInterval(() => {
        const quiet = Date.now() - lastFrame;
        if (quiet < QUIET_MS) {
          pinged = false;
        } else if (!pinged) {
          pinged = true;
          this.send({ type: 'ping', id: 'heartbeat' }, socket);
        } else if (quiet > QUIET_MS + (this.patience || ANSWER_MS)) {
          this.patience = Math.min((this.patience || ANSWER_MS) * 2, ANSWER_MOST_MS);
          tell({ kind: 'dead', at: now() });
          this.note('socket given up as silent');
          clearInterval(heartbeat);
          socket.terminate(); // no closing handshake on a dead path
        }
      }, 250);
      socket.deliver = (data) => {
        lastFrame = Date.now();
        this.patience = 0;
        this.take(socket, data.toString());
      };
      for (const data of socket.early.splice(0)) socket.deliver(data);
      socket.once('close', (code) => {
        clearInterval(heartbeat);
        resolve(code || 1006);
      });
    }));
  }

  take(socket, text) {
    let frame;
    try {
      frame = JSON.parse(text);
    } catch {
      tell({ kind: 'undocumented', text: `not JSON: ${text.slice(0, 200)}` });
      return;
    }
    checked += 1;
    const wrong = problem(frame);
    if (wrong) {
      tell({ kind: 'undocumented', text: `${wrong}: ${text.slice(0, 200)}` });
      return;
    }
    if (Number.isInteger(frame.v)) this.v = Math.max(this.v, frame.v);
    if (frame.type === 'state') {
      this.view = { ...frame.game };
      this.stated = Math.max(this.stated, frame.game.ply);
      this.markViewed();
    } else if (frame.type === 'move') {
      if (!this.heard.has(frame.ply)) this.heard.set(frame.ply, now());
      if (this.view && frame.ply >= this.view.ply) {
        Object.assign(this.view, {
          ply: frame.ply, to_move: frame.to_move, legal_moves: frame.legal_moves, status: frame.status,
        });
      }
    } else if (frame.type === 'error') {
      tell({ kind: 'error', code: frame.code });
    } else if (frame.type === 'away') {
      tell({ kind: 'away' });
    } else if (frame.type === 'restarting') {
      this.moveAway(socket, frame.within_ms);
    }
    if (frame.id !== undefined && frame.id !== null && this.answers.has(frame.id)) {
      this.answers.get(frame.id)(frame);
    }
    for (const listener of this.listeners) listener();
  }

  // As the pages after `restarting`: at a random moment of the window, a new socket (the proxy
  // sends it to another process), made this seat's socket, then the old one closed.
  async moveAway(old, withinMs) {
    await sleep(Math.random() * withinMs * 0.8);
    if (this.socket !== old || this.closing) return;
    const socket = await this.dial(`?v=${this.v}`);
    if (socket === null) return;
    if (this.socket !== old || this.closing) { socket.close(); return; }
    this.note('moved to a new socket after `restarting`');
    this.adopt(socket);
    old.close();
  }

  send(request, socket = this.socket) {
    if (socket && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(request));
    return socket;
  }

  // Send the move and wait for its answer; after a new socket, send it again. null if no
  // answer came within a minute.
  async answered(request) {
    const deadline = Date.now() + ANSWER_WITHIN_MS;
    const answer = new Promise((resolve) => this.answers.set(request.id, resolve));
    try {
      while (Date.now() < deadline) {
        while ((!this.socket || this.socket.readyState !== WebSocket.OPEN) && Date.now() < deadline) await sleep(10);
        const socket = this.send(request);
        while (Date.now() < deadline) {
          const got = await Promise.race([answer, sleep(200).then(() => null)]);
          if (got) return got;
          if (this.socket !== socket) {
            this.note('move sent again');
            break;
          }
        }
      }
      return null;
    } finally {
      this.answers.delete(request.id);
    }
  }

  close() {
    this.closing = true;
    if (this.socket) this.socket.close();
  }
}

function undelivered(sent, seats) {
  const late = [];
  for (const [ply, [at, moverRole]] of sent) {
    for (const seat of seats) {
      if (seat.role !== moverRole && !seat.heard.has(ply + 1) && seat.stated < ply + 1) late.push(at);
    }
  }
  return late;
}

function anyNews(seats, ms) {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      for (const seat of seats) seat.listeners.delete(done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    for (const seat of seats) seat.listeners.add(done);
  });
}

async function playGame({ game, table, cookies, spectators, rate }) {
  const enter = (what) => tell({ kind: 'trace', at: now(), table, what, phase: true });
  const seats = [new Seat('p1', game, cookies['1'], table), new Seat('p2', game, cookies['2'], table)];
  for (let n = 0; n < spectators; n += 1) seats.push(new Seat(`s${n}`, game, null, table));
  const sent = new Map(); // ply moved from -> [sent at, mover's role]
  for (const seat of seats) seat.run();
  try {
    enter('opening its sockets');
    await Promise.all(seats.map((seat) => seat.opened));
    enter("waiting for the game's snapshot");
    await seats[0].snapshot;
    tell({ kind: 'playing', table });
    await sleep((Math.random() / rate) * 1000);
    const interval = 1000 / rate;
    let nextAt = Date.now();
    let view = { ...seats[0].view };
    while (view.status === 'active' && !stopping) {
      nextAt += interval;
      const mover = seats[view.to_move - 1];
      const { ply } = view;
      const move = view.legal_moves[Math.floor(Math.random() * view.legal_moves.length)];
      const request = { type: 'move', move, ply, id: nextId++ };
      sent.set(ply, [now(), mover.role]);
      enter(`waiting for the answer to a move of game ${game}`);
      let answer = await mover.answered(request);
      for (let retries = 0; answer && answer.code === 'unavailable' && retries < 60; retries += 1) {
        // The database away a moment (a failover): the same move again shortly, as a player
        // would; if it was stored after all, the answer is the stored event (`duplicate`).
        enter('the move answered `unavailable`: sent again');
        await sleep(RETRY_MS * (0.75 + Math.random() / 2));
        answer = await mover.answered({ ...request, id: nextId++ });
      }
      if (answer === null) {
        tell({ kind: 'unacked' });
        break;
      }
      if (answer.type === 'error') break;
      tell({ kind: 'acked', game, ply: answer.ply, move: answer.move, at: now(), table });
      view = { ...mover.view };
      enter('between moves');
      await sleep(Math.max(0, nextAt - Date.now()));
    }
    enter('letting the last events arrive');
    const until = Date.now() + LAST_EVENTS_MS;
    while (undelivered(sent, seats).length && Date.now() < until) await anyNews(seats, until - Date.now());
  } finally {
    for (const [ply, [at, moverRole]] of sent) {
      for (const seat of seats) {
        const heard = seat.heard.get(ply + 1);
        if (seat.role !== moverRole && heard !== undefined) tell({ kind: 'trip', at, ms: (heard - at) * 1000 });
      }
    }
    for (const at of undelivered(sent, seats)) tell({ kind: 'undelivered', at });
    enter('closing its sockets');
    for (const seat of seats) seat.close();
    tell({ kind: 'done', game, table });
  }
}

// A fault of this checker is reported as one, not left to end the process unexplained.
process.on('unhandledRejection', (error) => {
  tell({ kind: 'failed', game: null, table: null, text: String(error?.stack || error) });
});

const lines = readline.createInterface({ input: process.stdin });
const games = new Set();
lines.on('line', (line) => {
  const order = JSON.parse(line);
  if (order.stop) {
    stopping = true;
    return;
  }
  const game = playGame(order).catch((error) => {
    tell({ kind: 'failed', game: order.game, table: order.table, text: String(error.stack || error) });
  });
  games.add(game);
  game.finally(() => games.delete(game));
});
lines.on('close', async () => {
  stopping = true;
  await Promise.all(games);
  // Exit once the last line is out: a write to a pipe the reader is behind on is queued, and
  // process.exit() would drop it.
  process.stdout.write(`${JSON.stringify({ kind: 'checked', frames: checked })}\n`, () => process.exit(0));
});
