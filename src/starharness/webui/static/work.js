// The chat's work panel: the session's current plan (steps and their states) and its
// background jobs (command, state, exit code, latest output), from plan.update/job.update.

import { el } from "./dom.js";

const MARKS = { pending: "○", in_progress: "◐", done: "●" };
const LABELS = { pending: "pending", in_progress: "in progress", done: "done" };

function pillClass(update) {
  if (update.state === "running") return "on";
  if (update.state === "exited") return update.exitCode === 0 ? "ok" : "off";
  return "muted";
}

export class WorkPanel {
  constructor(root) {
    this.root = root;
    this.planList = root.querySelector("#plan-steps");
    this.planTitle = root.querySelector("#plan-title");
    this.planBox = root.querySelector("#plan");
    this.jobList = root.querySelector("#job-list");
    this.jobBox = root.querySelector("#jobs");
    this.jobs = new Map();
  }

  clear() {
    this.planList.replaceChildren();
    this.jobList.replaceChildren();
    this.jobs.clear();
    this.planBox.hidden = true;
    this.jobBox.hidden = true;
    this._visible();
  }

  plan(update) {
    const done = update.items.filter((item) => item.status === "done").length;
    this.planTitle.textContent = `Plan · ${done}/${update.items.length} done · revision ${update.revision}`;
    this.planList.replaceChildren(...update.items.map((item) =>
      el("li", { class: `step ${item.status}`, "data-step": item.id, "data-status": item.status },
        el("span", { class: "mark", "aria-hidden": "true" }, MARKS[item.status] || "?"),
        el("span", { class: "step-text" }, item.text),
        el("span", { class: "step-state" }, LABELS[item.status] || item.status))));
    this.planBox.hidden = false;
    this._visible();
  }

  job(update) {
    let card = this.jobs.get(update.jobId);
    if (!card) {
      card = el("li", { class: "job", "data-job": update.jobId },
        el("div", { class: "job-head" },
          el("strong", {}, update.jobId), " ",
          el("span", { class: "job-state" }), " ",
          el("code", { class: "job-command" }, update.command)),
        el("pre", { class: "job-tail", hidden: true }));
      this.jobs.set(update.jobId, card);
      this.jobList.append(card);
    }
    card.dataset.state = update.state;
    const state = card.querySelector(".job-state");
    state.textContent = update.state === "exited" ? `exited ${update.exitCode}` : update.state;
    state.className = `job-state pill ${pillClass(update)}`;
    const tail = card.querySelector(".job-tail");
    if (update.tail) {
      tail.textContent = update.tail;
      tail.hidden = false;
      tail.scrollTop = tail.scrollHeight;
    }
    this.jobBox.hidden = false;
    this._visible();
  }

  _visible() {
    this.root.hidden = this.planBox.hidden && this.jobBox.hidden;
  }
}
