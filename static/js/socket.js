// The one way a page keeps a websocket to the server (the game page, the lobby, the news on
// every other page), so that they all come back after a drop, wait and obey the server's
// close codes alike (docs/PROTOCOL.md). What a frame means stays with each page.

// The close codes of docs/PROTOCOL.md.
export const CLOSE = Object.freeze({
  // The server process is restarting (a deploy): come back at once, to another process.
  RESTARTING: 1012,
  // The session ended: the cookie no longer signs the page in, so a new socket would be a
  // visitor's. The page reloads to show who is signed in now.
  SESSION_ENDED: 4401,
  NO_SUCH_GAME: 4404,
  TOO_MANY_SOCKETS: 4408,
  RATE_LIMITED: 4429,
  // The database was out of reach: "try again in a moment", which the backoff already does.
  UNAVAILABLE: 4503,
});

let navigating = false;
window.addEventListener("beforeunload", () => {
  navigating = true;
});
window.addEventListener("pageshow", () => {
  navigating = false;
});

// Whether the page is already on its way elsewhere (a form post, a link): reloading or
// redirecting then would undo what the user asked for, such as the log-out form itself.
export function isNavigating() {
  return navigating;
}

// Pages dropped together (a server restart) would otherwise all come back in the same instant.
export function jittered(ms) {
  return ms * (0.75 + Math.random() / 2);
}

// After a 1012 the page comes back within this random wait, and shows nothing unless the new
// socket is still not open after QUIET_MS: a restart nobody notices (docs/PROTOCOL.md).
const RESTART_SPREAD_MS = 500;
const QUIET_MS = 3000;
// Messages the page sends while it quietly reconnects wait for the new socket, at most these.
const HELD_MESSAGES = 20;
// A socket can die without a close: its server's host cut off behind the proxy, a phone
// between networks. The page cannot see the protocol's pings, so after HEARTBEAT_QUIET_MS
// without a frame it sends a ping of its own, and when nothing at all has come
// HEARTBEAT_ANSWER_MS after that, it gives the socket up and reconnects as after a drop.
// Each socket given up so in a row waits twice as long for its answer (up to
// HEARTBEAT_ANSWER_MAX_MS): a dead host is left after one wait, while a live one busy taking
// back the sockets of a lost host (its answers seconds late) is not left again and again,
// every page adding to its load. The first frame on a socket sets the wait back.
const HEARTBEAT_QUIET_MS = 3000;
const HEARTBEAT_ANSWER_MS = 2000;
const HEARTBEAT_ANSWER_MAX_MS = 16000;
const HEARTBEAT_CHECK_MS = 500;
const HEARTBEAT_ID = "heartbeat";

// `path` is the socket's address on this host ("/ws/lobby/"). Options:
//   onMessage(message)   each JSON frame (a frame that is not JSON is dropped)
//   resync()             what the page has seen, as query parameters ({v: 12}) that make the
//                        server send only what it missed; null when it has seen nothing yet
//   onConnecting(resumed), onOpen(resumed)   resumed: resync() gave parameters
//   onRetry()            the socket dropped and the next try is scheduled
//   stopOn               {code: callback}: close codes after which the page gives up
//   firstRetry, longestRetry   the backoff's first wait and its cap (ms), before the jitter
// Nothing connects before start().
export function openSocket(path, options) {
  return new PageSocket(path, options);
}

class PageSocket {
  #socket = null;
  #timer = null;
  #stopped = true;
  // Reconnecting after a restart (1012): not shown, and what is sent meanwhile is held.
  #quiet = false;
  #quietTimer = null;
  #held = [];
  // Moving to another process after `restarting`: the new socket being opened, and its timer.
  #moving = null;
  #moveTimer = null;
  #moveUntil = 0;
  // The heartbeat: when the page's socket last brought a frame, and whether it was pinged.
  #heard = 0;
  #pinged = false;
  #patience = HEARTBEAT_ANSWER_MS;
  #heartbeat = null;
  // Sockets given up as dead: their close, if it ever comes, is not a drop of the page's.
  #abandoned = new WeakSet();

  constructor(path, options) {
    this.path = path;
    this.options = {
      resync: () => null,
      onConnecting: () => {},
      onOpen: () => {},
      onRetry: () => {},
      stopOn: {},
      firstRetry: 500,
      longestRetry: 8000,
      ...options,
    };
    this.retry = this.options.firstRetry;
  }

  // Connects now, with the backoff reset: at first, and whenever the page knows the wait is
  // pointless (it is shown again, or back from the browser's cache).
  start() {
    this.#stopped = false;
    this.retry = this.options.firstRetry;
    this.#connect();
  }

  // No more reconnecting, and a close is ignored; the socket itself stays open until the
  // page goes, so the server does not see the user leave before the next page is there.
  stop() {
    this.#stopped = true;
    clearTimeout(this.#timer);
    clearTimeout(this.#moveTimer);
    clearInterval(this.#heartbeat);
    this.#endQuiet();
  }

  isOpen() {
    return Boolean(this.#socket) && this.#socket.readyState === WebSocket.OPEN;
  }

  isClosed() {
    return !this.#socket || this.#socket.readyState === WebSocket.CLOSED;
  }

  // False, and nothing sent, when the socket is not open: the caller tells the user. While
  // the page quietly reconnects after a restart, the message goes out on the new socket.
  send(message) {
    if (!this.isOpen()) {
      if (!this.#quiet || this.#held.length >= HELD_MESSAGES) return false;
      this.#held.push(message);
      return true;
    }
    this.#socket.send(JSON.stringify(message));
    return true;
  }

  #dial() {
    const since = this.options.resync();
    const query = since ? `?${new URLSearchParams(since)}` : "";
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    return [new WebSocket(`${scheme}://${location.host}${this.path}${query}`), Boolean(since)];
  }

  #connect() {
    clearTimeout(this.#timer);
    const [socket, resumed] = this.#dial();
    this.#socket = socket;
    if (!this.#quiet) this.options.onConnecting(resumed);
    socket.addEventListener("open", () => {
      this.retry = this.options.firstRetry;
      const held = this.#held;
      this.#endQuiet();
      this.#listen();
      this.options.onOpen(resumed);
      for (const message of held) socket.send(JSON.stringify(message));
    });
    socket.addEventListener("message", (event) => this.#received(socket, event.data));
    socket.addEventListener("close", (event) => this.#closed(socket, event.code));
  }

  #received(socket, data) {
    if (socket !== this.#socket) return; // the old socket of a move to another process
    this.#heard = Date.now();
    this.#pinged = false;
    this.#patience = HEARTBEAT_ANSWER_MS;
    let message;
    try {
      message = JSON.parse(data);
    } catch {
      return;
    }
    if (message.type === "pong" && message.id === HEARTBEAT_ID) return;
    if (message.type === "restarting") {
      // Its process is stopping: move to another one at a random moment of the window.
      const within = Number(message.within_ms) || 0;
      this.#moveUntil = Date.now() + within;
      clearTimeout(this.#moveTimer);
      this.#moveTimer = setTimeout(() => this.#move(), Math.random() * within * 0.8);
      return;
    }
    this.options.onMessage(message);
  }

  // Open a new socket (the proxy sends it to another process) and, once it is open, make it
  // the page's socket and close the old one: the page is never without one. If it cannot
  // open (no other process is ready yet), try again a moment later while the window lasts;
  // after it, the old socket's 1012 close brings the page back the usual way.
  #move() {
    const old = this.#socket;
    if (this.#stopped || this.#moving || !this.isOpen()) return;
    const [socket, resumed] = this.#dial();
    this.#moving = socket;
    socket.addEventListener("open", () => {
      this.#moving = null;
      if (this.#stopped || this.#socket !== old) {
        socket.close(1000);
        return;
      }
      this.#socket = socket;
      old.close(1000);
      this.#listen();
      this.options.onOpen(resumed);
    });
    socket.addEventListener("message", (event) => this.#received(socket, event.data));
    socket.addEventListener("close", (event) => {
      if (this.#moving === socket) {
        this.#moving = null;
        const wait = jittered(this.options.firstRetry);
        if (this.#socket === old && Date.now() + wait < this.#moveUntil) {
          this.#moveTimer = setTimeout(() => this.#move(), wait);
        }
      }
      this.#closed(socket, event.code);
    });
  }

  // The page's socket is open: listen for its silence.
  #listen() {
    this.#heard = Date.now();
    this.#pinged = false;
    clearInterval(this.#heartbeat);
    this.#heartbeat = setInterval(() => this.#beat(), HEARTBEAT_CHECK_MS);
  }

  #beat() {
    const socket = this.#socket;
    if (!this.isOpen()) {
      clearInterval(this.#heartbeat);
      return;
    }
    const quiet = Date.now() - this.#heard;
    if (!this.#pinged && quiet >= HEARTBEAT_QUIET_MS) {
      this.#pinged = true;
      socket.send(JSON.stringify({ type: "ping", id: HEARTBEAT_ID }));
    } else if (this.#pinged && quiet >= HEARTBEAT_QUIET_MS + this.#patience) {
      // Dead: reconnect as after a drop (1006), and let the old socket's own close, which
      // may come much later or never, change nothing.
      clearInterval(this.#heartbeat);
      this.#patience = Math.min(this.#patience * 2, HEARTBEAT_ANSWER_MAX_MS);
      this.#closed(socket, 1006);
      this.#abandoned.add(socket);
      socket.close();
    }
  }

  #closed(socket, code) {
    // A socket already replaced (a page back from the browser's cache opens a new one), or a
    // page that said it is leaving: its close changes nothing.
    if (socket !== this.#socket || this.#stopped || this.#abandoned.has(socket)) return;
    if (code === CLOSE.SESSION_ENDED) {
      if (!navigating) location.reload();
      return;
    }
    if (Object.hasOwn(this.options.stopOn, code)) {
      this.options.stopOn[code]();
      return;
    }
    if (code === CLOSE.RESTARTING && !this.#quiet) {
      this.#quiet = true;
      this.#quietTimer = setTimeout(() => this.#loud(), QUIET_MS);
      this.#timer = setTimeout(() => this.#connect(), Math.random() * RESTART_SPREAD_MS);
      return;
    }
    if (this.#quiet) {
      // A try while quietly reconnecting failed: try again soon, still quietly.
      this.#timer = setTimeout(() => this.#connect(), jittered(this.options.firstRetry));
      return;
    }
    this.options.onRetry();
    this.#timer = setTimeout(() => this.#connect(), jittered(this.retry));
    this.retry = Math.min(this.retry * 2, this.options.longestRetry);
  }

  // The quiet reconnect took too long: say so, as after any other drop, and keep trying.
  #loud() {
    if (!this.#quiet) return;
    this.#endQuiet();
    this.options.onRetry();
    if (this.isClosed()) {
      clearTimeout(this.#timer);
      this.#timer = setTimeout(() => this.#connect(), jittered(this.retry));
    }
  }

  #endQuiet() {
    this.#quiet = false;
    this.#held = [];
    clearTimeout(this.#quietTimer);
  }
}
