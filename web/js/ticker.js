// The news ticker: world.event headlines, newest first, a handful kept.

const KEEP = 8;

export class Ticker {
  constructor(list, placeName) {
    this._list = list;
    this._placeName = placeName;
    this._count = 0;
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
