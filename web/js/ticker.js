// The news ticker: world.event headlines, newest first, a handful kept.

const KEEP = 8;

export class Ticker {
  constructor(list, placeName) {
    this._list = list;
    this._placeName = placeName;
    this._count = 0;
  }

  /** Fill an empty ticker from a view's `news` (newest first), as after a reload. */
  restore(news) {
    if (this._count > 0 || !Array.isArray(news)) return;
    for (const item of [...news].reverse()) {
      if (item && typeof item.headline === "string") this.add(item.locationId, item.headline);
    }
  }

  /** Add one `world.event` frame's headline. */
  add(locationId, headline) {
    if (this._count === 0) this._list.replaceChildren();
    this._count += 1;
    const item = document.createElement("li");
    item.className = "ticker-item";
    item.dataset.testid = "ticker-item";
    const place = document.createElement("span");
    place.className = "ticker-place";
    place.textContent = this._placeName(locationId);
    item.append(place, document.createTextNode(` ${headline}`));
    this._list.prepend(item);
    while (this._list.children.length > KEEP) this._list.lastElementChild.remove();
  }
}
