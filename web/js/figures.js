// NPC figures: a capsule body and a head, coloured by mood, with a ring when you talk to them.

import { moodLook } from "./moods.js";

// Where figures stand, in order: the first at the middle of the bar, the rest around it.
const SPOTS = [
  [-0.9, -0.75],
  [1.5, -0.55],
  [-2.7, -0.6],
  [3.3, -0.7],
  [0.3, 0.4],
  [-4.3, 0.1],
  [4.6, 0.3],
  [-1.6, 1.2],
  [2.0, 1.3],
];
const BODY_HEIGHT = 0.8;
const BODY_RADIUS = 0.27;
const HEAD_RADIUS = 0.21;
const HEAD_Y = 1.72;
const SKIN = 0xd9b38c;

/** Where figure number `index` (0-based) stands; spots beyond the list go round a circle. */
export function spotFor(index) {
  if (index < SPOTS.length) return SPOTS[index];
  const angle = index * 2.399;
  return [Math.cos(angle) * 5, 1.5 + Math.sin(angle) * 1.5];
}

/** One clickable figure; every mesh carries `userData.npcId` for picking. */
export class Figure {
  constructor(THREE, npcId, index) {
    this.npcId = npcId;
    this.mood = null;
    this.group = new THREE.Group();
    const [x, z] = spotFor(index);
    this.group.position.set(x, 0, z);
    this._bodyMaterial = new THREE.MeshStandardMaterial({ roughness: 0.55, metalness: 0.1 });
    this.body = new THREE.Mesh(new THREE.CapsuleGeometry(BODY_RADIUS, BODY_HEIGHT, 6, 16), this._bodyMaterial);
    this.body.position.y = BODY_RADIUS + BODY_HEIGHT / 2 + 0.02;
    this.head = new THREE.Mesh(
      new THREE.SphereGeometry(HEAD_RADIUS, 20, 14),
      new THREE.MeshStandardMaterial({ color: SKIN, roughness: 0.7 }),
    );
    this.head.position.y = HEAD_Y;
    this.ring = new THREE.Mesh(
      new THREE.RingGeometry(0.42, 0.52, 32),
      new THREE.MeshBasicMaterial({ color: 0xf2d25c, side: THREE.DoubleSide }),
    );
    this.ring.rotation.x = -Math.PI / 2;
    this.ring.position.y = 0.012;
    this.ring.visible = false;
    for (const mesh of [this.body, this.head]) mesh.userData.npcId = npcId;
    this.group.add(this.body, this.head, this.ring);
    this._hovered = false;
    this.setMood(null);
  }

  /** Colour the body by mood; unknown moods look neutral. */
  setMood(mood) {
    this.mood = mood;
    this._look = moodLook(mood);
    this._paint();
  }

  setHovered(hovered) {
    this._hovered = hovered;
    this._paint();
  }

  setActive(active) {
    this.ring.visible = active;
  }

  /** A small nod while speaking, so you can see who talks even without reading. */
  animate(seconds, speaking) {
    this.head.position.y = speaking ? HEAD_Y + Math.abs(Math.sin(seconds * 9)) * 0.05 : HEAD_Y;
  }

  /** Points a label or a click can aim at, in world space. */
  labelAnchor(THREE) {
    return new THREE.Vector3(0, HEAD_Y + HEAD_RADIUS + 0.25, 0).add(this.group.position);
  }

  bodyCentre(THREE) {
    return new THREE.Vector3(0, this.body.position.y, 0).add(this.group.position);
  }

  look() {
    return {
      mood: this._look.mood,
      colour: `#${this._bodyMaterial.color.getHexString()}`,
      emissive: `#${this._bodyMaterial.emissive.getHexString()}`,
    };
  }

  dispose() {
    this.group.removeFromParent();
    for (const mesh of [this.body, this.head, this.ring]) {
      mesh.geometry.dispose();
      mesh.material.dispose();
    }
  }

  _paint() {
    this._bodyMaterial.color.setHex(this._look.body);
    this._bodyMaterial.emissive.setHex(this._look.glow);
    this._bodyMaterial.emissiveIntensity = this._hovered ? 2.6 : 1.0;
  }
}
