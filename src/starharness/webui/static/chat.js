// The chat tab: sessions from the store, a streamed conversation, tool calls and approvals.

import { el, when } from "./dom.js";
import { RpcError } from "./rpc.js";
import { WorkPanel } from "./work.js";

const BUSY = -32002;
const RESUME_TRIES = 25;

export class ChatView {
  constructor(client) {
    this.client = client;
    this.sessionId = null;
    this.bubble = null;
    this.thinking = null;
    this.tools = new Map();
    this.approvals = new Map();
    this.modelProblem = null;
    this.messages = document.getElementById("messages");
    this.sessions = document.getElementById("sessions");
    this.title = document.getElementById("session-title");
    this.prompt = document.getElementById("prompt");
    this.sendButton = document.getElementById("send");
    this.cancelButton = document.getElementById("cancel");
    this.work = new WorkPanel(document.getElementById("work"));
    client.onUpdate((update) => this.onUpdate(update));
    document.getElementById("new-chat").addEventListener("click", () => this.newChat());
    document.getElementById("composer").addEventListener("submit", (event) => {
      event.preventDefault();
      this.send();
    });
    this.prompt.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey) {
        event.preventDefault();
        this.send();
      }
    });
    this.cancelButton.addEventListener("click", () =>
      this.client.request("session", { action: "cancel", sessionId: this.sessionId }));
  }

  // Chats need a model; without one the page says how to configure it (the other tabs work).
  noModel(problem) {
    this.modelProblem = problem;
    const notice = document.getElementById("model-problem");
    notice.replaceChildren(el("strong", {}, "Chat is off. "), problem,
      " NPC transcripts and the Godot panel work without a model.");
    notice.hidden = false;
    this.prompt.disabled = true;
    this.prompt.placeholder = "No model configured (see above)";
    this._busy(false);
  }

  async start() {
    const wanted = new URLSearchParams(location.hash.slice(1)).get("session");
    if (wanted) await this.open(wanted);
    await this.loadSessions();
  }

  async loadSessions() {
    const { sessions } = await this.client.request("session", { action: "list", limit: 50 });
    this.sessions.replaceChildren(...sessions.map((s) => el("li", {},
      el("button", {
        "data-session": s.sessionId,
        "aria-current": s.sessionId === this.sessionId ? "true" : "false",
        onclick: () => this.open(s.sessionId),
      }, s.title || "(empty)", el("small", {}, `${s.sessionId} · ${when(s.updatedAt)}`)))));
  }

  _show(sessionId) {
    this.sessionId = sessionId;
    history.replaceState(null, "", `${location.search}#session=${encodeURIComponent(sessionId)}`);
    this.title.textContent = `session ${sessionId}`;
    this.messages.replaceChildren();
    this.tools.clear();
    this.approvals.clear();
    this.work.clear();
    this.bubble = null;
    this.thinking = null;
  }

  async newChat() {
    const opened = await this.client.request("session", { action: "create" });
    this._show(opened.sessionId);
    await this.loadSessions();
    this.prompt.focus();
  }

  async open(sessionId) {
    if (sessionId === this.sessionId) return;
    let opened = null;
    for (let attempt = 0; attempt < RESUME_TRIES && opened === null; attempt++) {
      try {
        opened = await this.client.request("session", { action: "resume", sessionId });
      } catch (error) {
        // A reloaded page's previous connection may still be closing the session.
        if (!(error instanceof RpcError) || error.code !== BUSY) {
          this._show(sessionId);
          this._add(el("li", { class: "msg error" }, error.message));
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
    if (opened === null) return;
    this._show(sessionId);
    for (const item of opened.history) {
      if (item.role === "tool") {
        const card = this._toolCard(item.callId, item.tool, item.arguments || "");
        this._toolResult(card, item.text, item.isError);
      } else {
        this._add(el("li", { class: `msg ${item.role}`, "data-role": item.role }, item.text));
      }
    }
    for (const asked of opened.pendingApprovals) this._approval(asked);
    if (opened.plan) this.work.plan(opened.plan);
    for (const job of opened.jobs || []) this.work.job(job);
    await this.loadSessions();
  }

  async send() {
    const text = this.prompt.value.trim();
    if (!text || this.sendButton.disabled) return;
    if (this.sessionId === null) await this.newChat();
    this.prompt.value = "";
    this._add(el("li", { class: "msg user", "data-role": "user" }, text));
    this._busy(true);
    try {
      await this.client.request("prompt", { sessionId: this.sessionId, text });
    } catch (error) {
      this._add(el("li", { class: "msg error" }, error.message));
    } finally {
      this._busy(false);
      this.bubble = null;
      this.loadSessions();
    }
  }

  onUpdate(update) {
    if (update.sessionId !== this.sessionId) return;
    switch (update.kind) {
      case "text.delta":
        this.thinking = null;
        if (this.bubble === null) {
          this.bubble = this._add(el("li", { class: "msg assistant", "data-role": "assistant" }));
        }
        this.bubble.append(update.text);
        this._scroll();
        break;
      case "reasoning.delta":
        if (this.thinking === null) {
          const body = el("div", { class: "reasoning-text" });
          this.thinking = body;
          this._add(el("li", { class: "reasoning" }, el("details", {}, el("summary", {}, "reasoning"), body)));
        }
        this.thinking.append(update.text);
        break;
      case "tool.call":
        this.bubble = null;
        this.thinking = null;
        this._toolCard(update.callId, update.name, update.arguments);
        break;
      case "tool.result": {
        const card = this.tools.get(update.callId) || this._toolCard(update.callId, update.name, "");
        this._toolResult(card, update.content, update.isError);
        break;
      }
      case "approval.asked":
        this.bubble = null;
        this._approval(update);
        break;
      case "approval.decided": {
        const card = this.approvals.get(update.callId);
        if (card) this._answered(card, update.decision);
        break;
      }
      case "plan.update":
        this.work.plan(update);
        break;
      case "job.update":
        this.work.job(update);
        break;
      case "turn.end":
        // Questions still open when their turn ends were never answered.
        for (const card of this.approvals.values()) {
          if (card.querySelector(".actions")) this._answered(card, "not answered (the turn ended)");
        }
        if (update.reason !== "completed") {
          this._add(el("li", { class: "msg error" }, `turn ${update.reason}${update.error ? ": " + update.error : ""}`));
        }
        this.bubble = null;
        break;
    }
  }

  _toolCard(callId, name, args) {
    const card = el("li", { class: "tool", "data-call": callId, "data-tool": name },
      el("div", {}, "tool ", el("code", {}, name)), el("pre", { class: "args" }, args));
    this.tools.set(callId, card);
    this._add(card);
    return card;
  }

  _toolResult(card, content, isError) {
    card.classList.toggle("failed", Boolean(isError));
    card.append(el("div", { class: "result-label" }, isError ? "failed:" : "result:"),
      el("pre", { class: "result" }, content));
    this._scroll();
  }

  _approval(asked) {
    const answer = (choice) => async () => {
      for (const button of card.querySelectorAll("button")) button.disabled = true;
      await this.client.request("session", {
        action: "answer", sessionId: asked.sessionId, callId: asked.callId, answer: choice,
      });
    };
    // Inside its call's card, so the question reads before the call's result (drawn after it).
    const tool = this.tools.get(asked.callId);
    const card = el(tool ? "div" : "li", { class: "approval", "data-approval": asked.callId },
      el("div", {}, el("strong", {}, asked.tool), " wants to run", asked.reason ? ` (${asked.reason})` : ""),
      el("pre", { class: "args" }, asked.arguments),
      el("div", { class: "actions" },
        el("button", { class: "primary", onclick: answer("allow_once") }, "Allow once"),
        el("button", { onclick: answer("reject") }, "Reject")));
    this.approvals.set(asked.callId, card);
    if (tool) {
      tool.insertBefore(card, tool.querySelector(".result-label"));
      this._scroll();
    } else {
      this._add(card);
    }
  }

  _answered(card, decision) {
    card.querySelector(".actions")?.replaceWith(el("div", { class: "answered" }, `answered: ${decision}`));
  }

  _busy(busy) {
    this.sendButton.disabled = busy || Boolean(this.modelProblem);
    this.cancelButton.hidden = !busy;
  }

  _add(node) {
    this.messages.append(node);
    this._scroll();
    return node;
  }

  _scroll() {
    this.messages.scrollTop = this.messages.scrollHeight;
  }
}
