// The HUD: the game's player view, field by field as the game sends it (`welcome.hud` and
// `hud` frames, shaped by the game's HUD model), plus the attitude of whoever you talk to: from
// `encounter.opened`, then from each view whose `attitudes` names them.
// A scalar field is a stat under its own name; a list field (`[{name, qty}]`) is a list.

const NUMBER = new Intl.NumberFormat("en-US");
/** Fields shown elsewhere on the page (the place, the attitude, the ticker) or not at all. */
const NOT_STATS = new Set(["playerId", "name", "location", "locationId", "attitudes", "news"]);
/**
 * How Omega station's fields look (the sample game this page was drawn for). Looks are keyed by
 * field name, so they apply only to a game that sends that field; any other field shows under
 * its own name, plainly.
 */
const FIELD_LOOKS = Object.freeze({
  credits: { unit: "cr", big: true },
  day: { big: true },
  cargo: { empty: "Hold is empty" },
});
const EMPTY_LIST = "None";

export class Hud {
  /** `elements`: `stats` (the `<dl>`), `place` (its fixed Location stat, kept last but one),
   * `location`, `attitude` (their `<dd>`s) and `lists` (where list fields go). */
  constructor(elements) {
    this._el = elements;
    this.data = {};
    this._talkingTo = null;
    this._attitude = null;
    /** The game's attitude range (its schema's `Attitude`); Omega station's until it is read. */
    this._range = { low: -100, high: 100 };
  }

  /** Read what the game declares (`/frames.schema.json`): its attitude range words attitudes. */
  useSchema(schema) {
    const attitude = schema?.$defs?.Attitude;
    const low = attitude?.minimum;
    const high = attitude?.maximum;
    if (typeof low !== "number" || typeof high !== "number" || low >= high) return;
    this._range = { low, high };
    if (this._talkingTo) this._showAttitudeOf(this._talkingTo.npcName, this._attitude);
  }

  /** How an attitude reads in words, on this game's scale. */
  attitudeWord(attitude) {
    return attitudeWord(attitude, this._range);
  }

  /** Replace the whole view with `data` (a `hud.data` or `welcome.hud` object). */
  show(data) {
    this.data = data && typeof data === "object" && !Array.isArray(data) ? data : {};
    const stats = [];
    const lists = [];
    for (const [key, value] of Object.entries(this.data)) {
      if (NOT_STATS.has(key)) continue;
      if (Array.isArray(value)) lists.push(listBlock(key, value));
      else if (isScalar(value)) stats.push(statBlock(key, value));
    }
    for (const old of this._el.stats.querySelectorAll(".hud-stat[data-field]")) old.remove();
    for (const stat of stats) this._el.stats.insertBefore(stat, this._el.place);
    this._el.lists.replaceChildren(...lists);
    this._el.location.textContent = locationOf(this.data).name || "—";
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
    this._attitude = attitude;
    const sign = attitude > 0 ? "+" : "";
    el.textContent = `${npcName}: ${sign}${attitude} (${this.attitudeWord(attitude)})`;
    el.dataset.value = String(attitude);
  }
}

function isScalar(value) {
  return ["number", "string", "boolean"].includes(typeof value);
}

function statBlock(key, value) {
  const look = FIELD_LOOKS[key] ?? {};
  const stat = document.createElement("div");
  stat.className = look.big ? "hud-stat is-big" : "hud-stat";
  stat.dataset.field = key;
  const term = document.createElement("dt");
  term.textContent = humanKey(key);
  const detail = document.createElement("dd");
  detail.dataset.testid = `hud-${key}`;
  detail.id = `hud-${key}`;
  detail.dataset.value = String(value);
  detail.textContent = shown(value, look.unit);
  stat.append(term, detail);
  return stat;
}

function listBlock(key, entries) {
  const look = FIELD_LOOKS[key] ?? {};
  const block = document.createElement("div");
  block.className = "hud-list";
  block.dataset.field = key;
  const heading = document.createElement("h3");
  heading.className = "hud-subheading";
  heading.textContent = humanKey(key);
  const list = document.createElement("ul");
  list.className = "hud-items";
  list.id = `hud-${key}`;
  list.dataset.testid = `hud-${key}`;
  const rows = entries.map((entry) => {
    const item = document.createElement("li");
    item.textContent = entryLine(entry);
    return item;
  });
  if (rows.length === 0) {
    const empty = document.createElement("li");
    empty.className = "hud-empty";
    empty.textContent = look.empty ?? EMPTY_LIST;
    rows.push(empty);
  }
  list.replaceChildren(...rows);
  block.append(heading, list);
  return block;
}

function shown(value, unit) {
  if (typeof value === "number") return unit ? `${NUMBER.format(value)} ${unit}` : NUMBER.format(value);
  if (typeof value === "boolean") return value ? "Yes" : "No";
  return value === "" ? "—" : value;
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

/**
 * What the game says about the place beyond its name, each part only when it gives it:
 * `scene` (its word for the look), `description` (a line about it) and `people` (`[{id, name}]`,
 * who is here now: fresher than `welcome.npcs`, or null when the view does not say).
 */
export function placeDetails(data) {
  const place = data ? data.location : undefined;
  const given = place && typeof place === "object" && !Array.isArray(place) ? place : {};
  const text = (value) => (typeof value === "string" ? value.trim() : "");
  const people = Array.isArray(given.people)
    ? given.people.filter((npc) => npc && typeof npc.id === "string" && npc.id)
    : null;
  return { scene: text(given.scene), description: text(given.description), people };
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

/**
 * "2 × fuel cells": the count, its sign and the name's first word are joined by no-break
 * spaces, so a narrow HUD wraps inside a long name, never between a number and its item.
 */
function entryLine(entry) {
  if (!entry || typeof entry !== "object") return String(entry);
  const name = String(entry.name ?? entry.goodId ?? entry.id ?? "?");
  const qty = entry.qty ?? entry.quantity;
  return typeof qty === "number" ? `${NUMBER.format(qty)}\u00a0×\u00a0${name}` : name;
}

/** Words by the share of the game's range on that side of zero: on Omega's -100..100, -50
 * and below is hostile, up to -10 cool, up to 10 neutral, below 50 warm, then friendly. */
function attitudeWord(attitude, range) {
  const side = attitude < 0 ? -Math.min(range.low, -1) : Math.max(range.high, 1);
  const share = attitude / side;
  if (share <= -0.5) return "hostile";
  if (share < -0.1) return "cool";
  if (share <= 0.1) return "neutral";
  if (share < 0.5) return "warm";
  return "friendly";
}

function humanKey(key) {
  const words = key.replace(/([a-z])([A-Z])/g, "$1 $2").replace(/[-_]+/g, " ").toLowerCase();
  return words ? words[0].toUpperCase() + words.slice(1) : "";
}
