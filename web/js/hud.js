// The HUD: the game's player view (credits, location, day, cargo) and the attitude of whoever
// you talk to: from `encounter.opened`, then from each view whose `attitudes` names them.
// Fields a game adds beyond these are listed as they come.

const NUMBER = new Intl.NumberFormat("en-US");
const SHOWN_ELSEWHERE = new Set([
  "credits", "location", "locationId", "day", "cargo", "playerId", "name", "attitudes", "news",
]);

export class Hud {
  constructor(elements) {
    this._el = elements;
    this.data = {};
    this._talkingTo = null;
  }

  /** Replace the whole view with `data` (a `hud.data` or `welcome.hud` object). */
  show(data) {
    this.data = data && typeof data === "object" ? data : {};
    const { credits, day, cargo } = this.data;
    this._el.credits.textContent = typeof credits === "number" ? `${NUMBER.format(credits)} cr` : "—";
    this._el.credits.dataset.value = typeof credits === "number" ? String(credits) : "";
    this._el.location.textContent = locationOf(this.data).name || "—";
    this._el.day.textContent = day === undefined || day === null ? "—" : String(day);
    this._showCargo(Array.isArray(cargo) ? cargo : []);
    this._showExtra();
    const talking = this._talkingTo;
    const fresh = talking ? attitudesOf(this.data)[talking.npcId] : undefined;
    if (typeof fresh === "number") this._showAttitudeOf(talking.npcName, fresh);
  }

  /** `{id, name}` of where the player is, as far as the view tells. */
  location() {
    return locationOf(this.data);
  }

  /** The attitude towards the player of the NPC you talk to, or nobody (`null`). */
  showAttitude(npcName, attitude, npcId = null) {
    this._talkingTo = npcName === null ? null : { npcId, npcName };
    this._showAttitudeOf(npcName, attitude);
  }

  _showAttitudeOf(npcName, attitude) {
    const el = this._el.attitude;
    if (npcName === null || typeof attitude !== "number") {
      el.textContent = "Not talking to anyone";
      el.dataset.value = "";
      return;
    }
    const sign = attitude > 0 ? "+" : "";
    el.textContent = `${npcName}: ${sign}${attitude} (${attitudeWord(attitude)})`;
    el.dataset.value = String(attitude);
  }

  _showCargo(cargo) {
    const rows = cargo.map((entry) => {
      const item = document.createElement("li");
      item.textContent = cargoLine(entry);
      return item;
    });
    if (rows.length === 0) {
      const empty = document.createElement("li");
      empty.className = "hud-empty";
      empty.textContent = "Hold is empty";
      rows.push(empty);
    }
    this._el.cargo.replaceChildren(...rows);
  }

  _showExtra() {
    const parts = [];
    for (const [key, value] of Object.entries(this.data)) {
      if (SHOWN_ELSEWHERE.has(key) || (typeof value === "object" && value !== null)) continue;
      const term = document.createElement("dt");
      term.textContent = humanKey(key);
      const detail = document.createElement("dd");
      detail.textContent = String(value);
      parts.push(term, detail);
    }
    this._el.extra.replaceChildren(...parts);
  }
}

/** `{id, name}` from `location: {id, name}`, `location: "id"` or `locationId: "id"`. */
export function locationOf(data) {
  const place = data ? data.location ?? data.locationId : undefined;
  if (place && typeof place === "object") {
    const id = typeof place.id === "string" ? place.id : "";
    return { id, name: typeof place.name === "string" && place.name ? place.name : prettyId(id) };
  }
  if (typeof place === "string") return { id: place, name: prettyId(place) };
  return { id: "", name: "" };
}

/** `{npcId: attitude}` from a view's `attitudes`, or nothing. */
function attitudesOf(data) {
  const attitudes = data ? data.attitudes : undefined;
  return attitudes && typeof attitudes === "object" && !Array.isArray(attitudes) ? attitudes : {};
}

/** "ceres-deep" -> "Ceres Deep": good enough for places the HUD has not named. */
export function prettyId(id) {
  return String(id)
    .split(/[-_\s]+/)
    .filter(Boolean)
    .map((word) => word[0].toUpperCase() + word.slice(1))
    .join(" ");
}

function cargoLine(entry) {
  if (!entry || typeof entry !== "object") return String(entry);
  const name = entry.name ?? entry.goodId ?? entry.id ?? "cargo";
  const qty = entry.qty ?? entry.quantity;
  return typeof qty === "number" ? `${NUMBER.format(qty)} × ${name}` : String(name);
}

function attitudeWord(attitude) {
  if (attitude <= -50) return "hostile";
  if (attitude < -10) return "cool";
  if (attitude <= 10) return "neutral";
  if (attitude < 50) return "warm";
  return "friendly";
}

function humanKey(key) {
  const words = key.replace(/([a-z])([A-Z])/g, "$1 $2").replace(/[-_]+/g, " ").toLowerCase();
  return words ? words[0].toUpperCase() + words.slice(1) : "";
}
