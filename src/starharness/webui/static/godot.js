// The Godot tab: the editor bridge's state, paired editors, recent play errors, a check button.

import { el, getJson, when } from "./dom.js";

const REFRESH_MS = 2000;

export class GodotView {
  constructor() {
    this.root = document.getElementById("godot");
    this.timer = null;
    this.checkResult = null;
  }

  async show() {
    await this.refresh();
    clearInterval(this.timer);
    this.timer = setInterval(() => this.refresh(), REFRESH_MS);
  }

  hide() {
    clearInterval(this.timer);
    this.timer = null;
  }

  async refresh() {
    const data = await getJson("/api/godot");
    if (!data.present) {
      this.root.replaceChildren(el("h2", {}, "Godot bridge"),
        el("p", { class: "subtle", "data-bridge": "absent" },
          "This profile has no Godot bridge. Start `star-harness web --profile godot --project DIR`."));
      return;
    }
    const s = data.status;
    const editors = s.clients.filter((c) => c.authenticated);
    this.root.replaceChildren(...[
      el("h2", {}, "Godot bridge ",
        el("span", { class: `pill ${s.running ? "on" : "off"}`, "data-bridge": s.running ? "listening" : "stopped" },
          s.running ? `listening on ${s.host}:${s.port}` : "not listening")),
      el("p", { class: "subtle" }, `project ${s.workspace || "any"} · endpoint file ${s.endpoint_path} · ${s.enabled_tools.length} tools enabled`),
      el("h3", {}, `Editors (${editors.length})`),
      editors.length === 0
        ? el("p", { class: "subtle", "data-editors": "none" }, "No editor paired: open the project in Godot 4 with the Agent RPC addon enabled.")
        : el("table", { "data-editors": editors.length },
          el("tr", {}, el("th", {}, "editor"), el("th", {}, "Godot"), el("th", {}, "addon"), el("th", {}, "project"), el("th", {}, "scene")),
          editors.map((c) => el("tr", { "data-editor": c.id },
            el("td", {}, c.id), el("td", {}, c.godot_version), el("td", {}, c.addon_version),
            el("td", { class: "project" }, c.project_path + (c.matches_workspace ? "" : " (other project: gets no calls)")),
            el("td", {}, c.scene || "")))),
      s.handshake_failures
        ? el("p", { class: "play-error" }, `refused connections: ${s.handshake_failures}; ${s.last_handshake_failure_advice || s.last_handshake_failure}`)
        : null,
      el("h3", {}, `Recent play errors (${s.play_errors.length})`),
      el("ul", { id: "play-errors" }, s.play_errors.map((e) =>
        el("li", { class: "play-error", "data-severity": e.severity }, `${e.severity}: ${e.message} (${e.client_id}, ${when(Date.parse(e.at))})`))),
      el("h3", {}, "Check"),
      el("button", { id: "godot-check", class: "primary", onclick: () => this.check() }, "Check (godot_editor_info)"),
      this.checkResult,
    ].filter((node) => node !== null));
  }

  async check() {
    const result = await getJson("/api/godot/check", { method: "POST" });
    this.checkResult = el("pre", { class: `wire check ${result.ok ? "ok" : "failed"}`, id: "check-result" }, result.text);
    await this.refresh();
  }
}
