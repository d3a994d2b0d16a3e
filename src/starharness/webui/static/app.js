// The web UI: one WebSocket speaking the session protocol, three tabs.

import { ChatView } from "./chat.js";
import { withToken } from "./dom.js";
import { GodotView } from "./godot.js";
import { SessionClient } from "./rpc.js";
import { TranscriptsView } from "./transcripts.js";

const scheme = location.protocol === "https:" ? "wss" : "ws";
const client = new SessionClient(withToken(`${scheme}://${location.host}/rpc`));
const status = document.getElementById("connection");
client.onStatus((state, reason) => {
  status.textContent = state === "up" ? "connected" : `disconnected${reason ? ": " + reason : ""}`;
  status.className = `status ${state}`;
});

const chat = new ChatView(client);
const transcripts = new TranscriptsView();
const godot = new GodotView();

function select(name) {
  for (const tab of document.querySelectorAll("[role=tab]")) {
    tab.setAttribute("aria-selected", String(tab.dataset.tab === name));
  }
  for (const section of document.querySelectorAll("section.tab")) {
    section.hidden = section.dataset.tab !== name;
  }
  if (name === "transcripts") transcripts.show();
  if (name === "godot") godot.show(); else godot.hide();
}

for (const tab of document.querySelectorAll("[role=tab]")) {
  tab.addEventListener("click", () => select(tab.dataset.tab));
}

await client.connect();
const { model } = await client.request("initialize", { protocolVersion: 1, client: { name: "star-harness web" } });
if (model && !model.ready) chat.noModel(model.problem);
await chat.start();
document.body.dataset.ready = "true";
window.starHarnessWeb = { client, chat, select };
