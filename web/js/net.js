// The WebSocket to the harness: JSON frames in and out, reconnecting with backoff.

const FRAME_PATH = "/gh";
const FIRST_RETRY_MS = 250;
const MAX_RETRY_MS = 5000;

/** ws(s)://<this host>/gh, carrying the page's ?token= along when there is one. */
export function frameUrl(pageLocation) {
  const scheme = pageLocation.protocol === "https:" ? "wss:" : "ws:";
  const url = new URL(`${scheme}//${pageLocation.host}${FRAME_PATH}`);
  const token = new URLSearchParams(pageLocation.search).get("token");
  if (token) url.searchParams.set("token", token);
  return url.toString();
}

/** The player this page acts for: ?player= or the given default. */
export function playerFromPage(pageLocation, fallback) {
  const chosen = new URLSearchParams(pageLocation.search).get("player");
  return chosen && chosen.trim() ? chosen.trim() : fallback;
}

/**
 * One logical connection that survives server restarts.
 *
 * Callbacks: onOpen(), onFrame(frame), onClose(retryInMs), onGarbage(text).
 */
export class Connection {
  constructor(url, { onOpen, onFrame, onClose, onGarbage }) {
    this._url = url;
    this._handlers = { onOpen, onFrame, onClose, onGarbage };
    this._socket = null;
    this._retryMs = FIRST_RETRY_MS;
    this._retryTimer = null;
    this._stopped = false;
  }

  get isOpen() {
    return this._socket !== null && this._socket.readyState === WebSocket.OPEN;
  }

  start() {
    this._stopped = false;
    this._dial();
  }

  stop() {
    this._stopped = true;
    clearTimeout(this._retryTimer);
    if (this._socket) this._socket.close(1000, "page closed");
  }

  /** Send one frame; false when there is no open socket to send it on. */
  send(frame) {
    if (!this.isOpen) return false;
    this._socket.send(JSON.stringify(frame));
    return true;
  }

  _dial() {
    let socket;
    try {
      socket = new WebSocket(this._url);
    } catch (problem) {
      // A malformed URL will not fix itself, but a retry costs little and keeps one code path.
      console.error("cannot open the frame socket", problem);
      this._scheduleRetry();
      return;
    }
    this._socket = socket;
    socket.addEventListener("open", () => {
      this._retryMs = FIRST_RETRY_MS;
      this._handlers.onOpen();
    });
    socket.addEventListener("message", (event) => this._receive(event.data));
    socket.addEventListener("close", () => {
      if (this._socket !== socket) return;
      this._socket = null;
      if (!this._stopped) this._scheduleRetry();
    });
  }

  _receive(data) {
    if (typeof data !== "string") {
      this._handlers.onGarbage("a binary message");
      return;
    }
    let frame;
    try {
      frame = JSON.parse(data);
    } catch {
      this._handlers.onGarbage(data.slice(0, 120));
      return;
    }
    if (frame === null || typeof frame !== "object" || typeof frame.t !== "string") {
      this._handlers.onGarbage(data.slice(0, 120));
      return;
    }
    this._handlers.onFrame(frame);
  }

  _scheduleRetry() {
    // Jitter keeps many tabs from hammering a restarting server in lockstep.
    const wait = Math.round(this._retryMs * (0.75 + Math.random() * 0.5));
    this._retryMs = Math.min(this._retryMs * 2, MAX_RETRY_MS);
    this._handlers.onClose(wait);
    clearTimeout(this._retryTimer);
    this._retryTimer = setTimeout(() => this._dial(), wait);
  }
}
