// The 3D view of where the player is (Omega's bar, or a plain room): renders figures, picks them
// by raycasting, keeps HTML name labels over their heads.
// Without WebGL (or without three.js) it degrades to a no-op view: the people list still works.

import { moodLook } from "./moods.js";

const SOFTWARE_FRAME_GAP_MS = 125;
const LABEL_MARGIN = 4;
const LABEL_GAP = 4;

/**
 * Create the view inside `container`. `onPick(npcId)` runs when a figure is clicked.
 * Always resolves; check `.available` to learn whether 3D is on screen.
 */
export async function createScene(container, labelLayer, { onPick }) {
  const probe = probeWebGl2();
  if (!probe.ok) return new FlatScene();
  let THREE;
  let builders;
  let figures;
  try {
    THREE = await import("three");
    let bar;
    let room;
    [bar, room, figures] = await Promise.all([
      import("./bar.js"),
      import("./room.js"),
      import("./figures.js"),
    ]);
    builders = { bar: bar.buildBar, room: room.buildRoom };
  } catch (problem) {
    console.error("three.js could not be loaded; showing the flat view", problem);
    return new FlatScene();
  }
  try {
    return new PlaceScene(THREE, builders, figures, container, labelLayer, onPick, probe.software);
  } catch (problem) {
    console.error("WebGL could not start; showing the flat view", problem);
    return new FlatScene();
  }
}

/** Whether WebGL 2 works, and whether it runs in software (SwiftShader, llvmpipe). */
function probeWebGl2() {
  let gl = null;
  try {
    gl = document.createElement("canvas").getContext("webgl2");
  } catch {
    gl = null;
  }
  if (!gl) return { ok: false, software: false };
  const info = gl.getExtension("WEBGL_debug_renderer_info");
  const renderer = info ? String(gl.getParameter(info.UNMASKED_RENDERER_WEBGL)) : "";
  gl.getExtension("WEBGL_lose_context")?.loseContext();
  return { ok: true, software: /swiftshader|llvmpipe|software/i.test(renderer) };
}

/** The view when there is no 3D: remembers moods so the rest of the page can ask. */
class FlatScene {
  constructor() {
    this.available = false;
    this._moods = new Map();
    this.place = "";
  }

  setPlace(look) {
    this.place = look;
  }

  setFigures(npcs) {
    const keep = new Set(npcs.map((npc) => npc.id));
    for (const id of this._moods.keys()) if (!keep.has(id)) this._moods.delete(id);
  }

  setMood(npcId, mood) {
    this._moods.set(npcId, mood);
  }

  setActive() {}

  setSpeaking() {}

  screenPoint() {
    return null;
  }

  look(npcId) {
    const look = moodLook(this._moods.get(npcId));
    return { mood: look.mood, colour: null, emissive: null };
  }
}

class PlaceScene {
  constructor(THREE, builders, figures, container, labelLayer, onPick, software) {
    this.available = true;
    this.place = "";
    this._THREE = THREE;
    this._builders = builders;
    this._Figure = figures.Figure;
    this._spotFor = figures.spotFor;
    this._container = container;
    this._labelLayer = labelLayer;
    this._onPick = onPick;
    this._figures = new Map();
    this._labels = new Map();
    this._speaking = null;
    this._hovered = null;
    this._frameRequested = false;
    this._started = performance.now();

    // A software renderer draws this scene at a few frames a second: spend less per frame there.
    this._frameGapMs = software ? SOFTWARE_FRAME_GAP_MS : 0;
    this._still = window.matchMedia?.("(prefers-reduced-motion: reduce)").matches ?? false;
    this._lastFrame = 0;
    this._renderer = new THREE.WebGLRenderer({ antialias: !software });
    this._renderer.setPixelRatio(software ? 1 : Math.min(window.devicePixelRatio || 1, 2));
    this._renderer.outputColorSpace = THREE.SRGBColorSpace;
    const canvas = this._renderer.domElement;
    canvas.className = "scene-canvas";
    canvas.dataset.testid = "scene-canvas";
    canvas.setAttribute("aria-hidden", "true");
    container.prepend(canvas);

    this._scene = new THREE.Scene();
    this._room = new THREE.Group();
    this._scene.add(this._room);
    this._camera = new THREE.PerspectiveCamera(45, 16 / 9, 0.1, 60);
    this._camera.position.set(0, 2.3, 5.2);
    this._camera.lookAt(0, 1.2, -1.2);
    this._raycaster = new THREE.Raycaster();

    canvas.addEventListener("pointermove", (event) => this._hover(event));
    canvas.addEventListener("pointerleave", () => this._setHovered(null));
    canvas.addEventListener("click", (event) => {
      const npcId = this._pick(event);
      if (npcId) this._onPick(npcId);
    });
    new ResizeObserver(() => this._resize()).observe(container);
    this._resize();
  }

  /** Draw the place as `look` (one of places.js's LOOKS); the figures stay where they stand. */
  setPlace(look) {
    if (look === this.place || !Object.hasOwn(this._builders, look)) return;
    this.place = look;
    const old = this._room;
    old.removeFromParent();
    old.traverse((part) => {
      part.geometry?.dispose();
      part.material?.dispose();
    });
    this._room = new this._THREE.Group();
    this._scene.add(this._room);
    this._builders[look](this._THREE, this._room, this._scene);
    this.requestRender();
  }

  /** Show exactly these NPCs: `[{id, name, number}]`, numbered as in the people list. */
  setFigures(npcs) {
    const keep = new Set(npcs.map((npc) => npc.id));
    for (const [id, figure] of this._figures) {
      if (keep.has(id)) continue;
      figure.dispose();
      this._figures.delete(id);
      this._labels.get(id)?.remove();
      this._labels.delete(id);
    }
    npcs.forEach((npc, index) => {
      let figure = this._figures.get(npc.id);
      if (!figure) {
        figure = new this._Figure(this._THREE, npc.id, index);
        this._figures.set(npc.id, figure);
        this._scene.add(figure.group);
      }
      const [x, z] = this._spotFor(index);
      figure.group.position.set(x, 0, z);
      this._label(npc).replaceChildren(labelNumber(npc.number), document.createTextNode(npc.name));
    });
    this.requestRender();
  }

  setMood(npcId, mood) {
    const figure = this._figures.get(npcId);
    if (!figure) return;
    figure.setMood(mood);
    this._labels.get(npcId)?.style.setProperty("--mood", cssHex(moodLook(mood).body));
    this.requestRender();
  }

  setActive(npcId) {
    for (const [id, figure] of this._figures) figure.setActive(id === npcId);
    for (const [id, label] of this._labels) label.classList.toggle("is-active", id === npcId);
    this.requestRender();
  }

  setSpeaking(npcId) {
    this._speaking = npcId;
    this.requestRender();
  }

  /** Where a figure's body is on the page, in CSS pixels (for tests and tooltips). */
  screenPoint(npcId) {
    const figure = this._figures.get(npcId);
    if (!figure) return null;
    return this._toPage(figure.bodyCentre(this._THREE));
  }

  look(npcId) {
    const figure = this._figures.get(npcId);
    return figure ? figure.look() : { ...moodLook(null), colour: null, emissive: null };
  }

  requestRender() {
    if (this._frameRequested) return;
    this._frameRequested = true;
    const wait = this._lastFrame + this._frameGapMs - performance.now();
    if (wait > 0) setTimeout(() => requestAnimationFrame(() => this._frame()), wait);
    else requestAnimationFrame(() => this._frame());
  }

  _frame() {
    this._frameRequested = false;
    this._lastFrame = performance.now();
    const seconds = (performance.now() - this._started) / 1000;
    const moving = this._still ? null : this._speaking;
    for (const [id, figure] of this._figures) figure.animate(seconds, id === moving);
    this._renderer.render(this._scene, this._camera);
    this._placeLabels();
    // Only a speaking figure moves; an idle room costs no frames.
    if (moving) this.requestRender();
  }

  _resize() {
    const width = Math.max(1, this._container.clientWidth);
    const height = Math.max(1, this._container.clientHeight);
    this._renderer.setSize(width, height, false);
    this._camera.aspect = width / height;
    // Keep the whole counter in view on narrow screens.
    this._camera.fov = this._camera.aspect < 1.2 ? 60 : 45;
    this._camera.updateProjectionMatrix();
    this.requestRender();
  }

  _label(npc) {
    let label = this._labels.get(npc.id);
    if (!label) {
      label = document.createElement("div");
      label.className = "figure-label";
      label.dataset.npcId = npc.id;
      label.dataset.testid = `figure-label-${npc.id}`;
      label.style.setProperty("--mood", cssHex(moodLook(null).body));
      this._labelLayer.append(label);
      this._labels.set(npc.id, label);
    }
    return label;
  }

  /**
   * Put each name over its figure's head, kept whole inside the view (a figure near the edge
   * of a narrow view keeps its whole name) and clear of the names already placed: one that
   * would overlap another is lifted above it.
   */
  _placeLabels() {
    const box = this._container.getBoundingClientRect();
    const placed = [];
    const spots = [];
    for (const [id, label] of this._labels) {
      const figure = this._figures.get(id);
      const point = figure && this._toPage(figure.labelAnchor(this._THREE));
      label.hidden = !point;
      if (point) spots.push({ label, x: point.x - box.left, y: point.y - box.top });
    }
    // Nearest the viewer first: their names sit lowest, the ones behind move up.
    spots.sort((a, b) => b.y - a.y);
    for (const { label, x, y } of spots) {
      const width = label.offsetWidth;
      const height = label.offsetHeight;
      const left = clamp(x - width / 2, LABEL_MARGIN, box.width - width - LABEL_MARGIN);
      let top = clamp(y - height, LABEL_MARGIN, box.height - height - LABEL_MARGIN);
      // Each lift goes above another name, so this ends within `placed.length` lifts.
      let lifted = true;
      while (lifted) {
        lifted = false;
        for (const other of placed) {
          const apart = left >= other.right || other.left >= left + width;
          if (!apart && top < other.bottom && other.top < top + height) {
            top = other.top - height - LABEL_GAP;
            lifted = true;
          }
        }
      }
      top = Math.max(LABEL_MARGIN, top);
      placed.push({ left, right: left + width, top, bottom: top + height });
      label.style.transform = `translate(${Math.round(left)}px, ${Math.round(top)}px)`;
    }
  }

  _toPage(worldPoint) {
    const projected = worldPoint.clone().project(this._camera);
    if (projected.z > 1) return null;
    const rect = this._renderer.domElement.getBoundingClientRect();
    return {
      x: rect.left + ((projected.x + 1) / 2) * rect.width,
      y: rect.top + ((1 - projected.y) / 2) * rect.height,
    };
  }

  _pick(event) {
    const rect = this._renderer.domElement.getBoundingClientRect();
    const pointer = new this._THREE.Vector2(
      ((event.clientX - rect.left) / rect.width) * 2 - 1,
      -((event.clientY - rect.top) / rect.height) * 2 + 1,
    );
    this._raycaster.setFromCamera(pointer, this._camera);
    // A figure placed since the last frame has a stale world matrix until the next render;
    // a click that comes first must still hit where the figure now stands.
    this._scene.updateMatrixWorld();
    const targets = [...this._figures.values()].flatMap((figure) => [figure.body, figure.head]);
    const hit = this._raycaster.intersectObjects(targets, false)[0];
    return hit ? hit.object.userData.npcId : null;
  }

  _hover(event) {
    this._setHovered(this._pick(event));
  }

  _setHovered(npcId) {
    if (npcId === this._hovered) return;
    this._figures.get(this._hovered)?.setHovered(false);
    this._figures.get(npcId)?.setHovered(true);
    this._hovered = npcId;
    this._renderer.domElement.style.cursor = npcId ? "pointer" : "";
    this.requestRender();
  }
}

function clamp(value, low, high) {
  return Math.min(Math.max(value, low), Math.max(low, high));
}

function labelNumber(number) {
  const badge = document.createElement("span");
  badge.className = "figure-label-number";
  badge.textContent = String(number);
  return badge;
}

function cssHex(value) {
  return `#${value.toString(16).padStart(6, "0")}`;
}
