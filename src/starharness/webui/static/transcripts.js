// The NPC transcripts tab: what the NPC's model was sent, request by request (`inspect`).

import { el, getJson, when } from "./dom.js";

export class TranscriptsView {
  constructor() {
    this.list = document.getElementById("transcripts");
    this.detail = document.getElementById("transcript");
  }

  async show() {
    const { transcripts } = await getJson("/api/transcripts");
    if (transcripts.length === 0) {
      this.list.replaceChildren(el("li", { class: "subtle" }, "No encounter transcripts in the session store."));
      return;
    }
    this.list.replaceChildren(...transcripts.map((t) => el("li", {},
      el("button", { "data-transcript": t.sessionId, onclick: () => this.open(t.sessionId) },
        `${t.npcName || t.npc} with ${t.player}`,
        el("small", {}, `${t.game} · encounter ${t.encounter} · ${when(t.startedAt)}`)))));
  }

  async open(sessionId) {
    const t = await getJson(`/api/transcripts/${encodeURIComponent(sessionId)}`);
    const requests = t.requests.map((r) => {
      const answer = r.answer || {};
      return el("details", { class: "request", "data-request": r.number },
        el("summary", {}, `request ${r.number} (${r.provider}, ${r.model})`),
        el("h4", {}, "system"), el("div", { class: "wire" }, r.system),
        el("h4", {}, `tools (${r.tools.length})`),
        el("div", { class: "wire" }, r.tools.map((tool) => JSON.stringify(tool)).join("\n")),
        el("h4", {}, `messages (${r.messages.length})`),
        el("div", { class: "wire messages-sent" }, r.messages.map((m) =>
          el("div", {}, el("span", { class: "role" }, `${m.role}: `),
            typeof m.content === "string" ? m.content : JSON.stringify(m.content ?? m.tool_calls)))),
        el("h4", {}, "answered"),
        el("div", { class: "wire answer" },
          answer.text ? JSON.stringify(answer.text) : "",
          (answer.toolCalls || []).map((c) => el("div", {}, `${c.name}(${c.arguments})`)),
          (answer.toolResults || []).map((res) =>
            el("div", {}, `tool ${res.name} -> ${res.isError ? "error" : "ok"}: ${res.content}`))));
    });
    this.detail.replaceChildren(
      el("h2", {}, `${t.npcName} (${t.npc}) with ${t.player}`),
      el("p", { class: "subtle" }, `game ${t.game} · encounter ${t.encounter} · session ${t.sessionId} · ${t.requests.length} requests`),
      ...requests);
    requests[0]?.setAttribute("open", "");
  }
}
