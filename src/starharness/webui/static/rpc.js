// The session protocol (JSON-RPC 2.0) over one WebSocket: requests, answers, updates.

export class RpcError extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

export class SessionClient {
  constructor(url) {
    this.url = url;
    this.nextId = 1;
    this.waiting = new Map();
    this.listeners = new Set();
    this.statusListeners = new Set();
  }

  onUpdate(listener) { this.listeners.add(listener); }
  onStatus(listener) { this.statusListeners.add(listener); }

  connect() {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(this.url);
      this.socket = socket;
      socket.addEventListener("open", () => { this._status("up"); resolve(); });
      socket.addEventListener("error", () => reject(new Error("the connection failed")));
      socket.addEventListener("close", (event) => {
        for (const { reject: fail } of this.waiting.values()) fail(new RpcError(-1, "disconnected"));
        this.waiting.clear();
        this._status("down", event.reason);
      });
      socket.addEventListener("message", (event) => this._receive(event.data));
    });
  }

  request(method, params = {}) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.socket.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
    });
  }

  _receive(text) {
    const message = JSON.parse(text);
    if (message.method === "session/update") {
      for (const listener of this.listeners) listener(message.params);
      return;
    }
    const waiting = this.waiting.get(message.id);
    if (!waiting) return;
    this.waiting.delete(message.id);
    if (message.error) waiting.reject(new RpcError(message.error.code, message.error.message));
    else waiting.resolve(message.result);
  }

  _status(state, reason = "") {
    for (const listener of this.statusListeners) listener(state, reason);
  }
}
