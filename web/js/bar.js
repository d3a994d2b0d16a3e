// Omega station's bar: floor, walls, the bar counter, stools, shelves, a viewport full of
// stars, lights. Everything goes into `scene` (a group the view swaps when the place changes).

import { addShell } from "./room.js";

const COUNTER_Z = -1.6;

/** Add the whole bar to `scene` (a THREE.Group); `world` gets its background and fog. */
export function buildBar(THREE, scene, world) {
  world.background = new THREE.Color(0x0a0e18);
  world.fog = new THREE.Fog(0x0a0e18, 9, 22);
  addLights(THREE, scene);
  addRoom(THREE, scene);
  addCounter(THREE, scene);
  addShelves(THREE, scene);
  addStools(THREE, scene);
  addViewport(THREE, scene);
}

function addLights(THREE, scene) {
  scene.add(new THREE.HemisphereLight(0x8fa8d8, 0x1a1410, 1.1));
  const key = new THREE.DirectionalLight(0xfff1dc, 1.4);
  key.position.set(3, 6, 5);
  scene.add(key);
  // Warm lamps over the counter and a cold neon wash: the bar's two moods.
  for (const x of [-2.4, 0, 2.4]) {
    const lamp = new THREE.PointLight(0xffb361, 6, 6, 1.6);
    lamp.position.set(x, 2.7, COUNTER_Z + 0.2);
    scene.add(lamp);
    const shade = new THREE.Mesh(
      new THREE.ConeGeometry(0.28, 0.25, 12, 1, true),
      new THREE.MeshStandardMaterial({ color: 0x2a2f3a, emissive: 0xffa64d, emissiveIntensity: 0.6, side: THREE.DoubleSide }),
    );
    shade.position.set(x, 2.9, COUNTER_Z + 0.2);
    scene.add(shade);
  }
  // Low and close to the counter: it washes the floor, not the faces.
  const neon = new THREE.PointLight(0x36d6ff, 3, 3.5, 1.5);
  neon.position.set(0, 0.25, COUNTER_Z + 0.9);
  scene.add(neon);
}

function addRoom(THREE, scene) {
  addShell(THREE, scene, {
    floor: { color: 0x232a36, roughness: 0.85, metalness: 0.2 },
    grid: [0x33405a, 0x2a3448],
    wall: { color: 0x1c2333, roughness: 0.9 },
  });
}

function addCounter(THREE, scene) {
  const wood = new THREE.MeshStandardMaterial({ color: 0x6b4530, roughness: 0.6, metalness: 0.1 });
  const brass = new THREE.MeshStandardMaterial({ color: 0xc8a05a, roughness: 0.35, metalness: 0.7 });
  const body = new THREE.Mesh(new THREE.BoxGeometry(7, 1.05, 0.8), wood);
  body.position.set(0, 0.525, COUNTER_Z);
  scene.add(body);
  const top = new THREE.Mesh(new THREE.BoxGeometry(7.3, 0.08, 1.0), brass);
  top.position.set(0, 1.09, COUNTER_Z);
  scene.add(top);
  const strip = new THREE.Mesh(
    new THREE.BoxGeometry(7, 0.05, 0.02),
    new THREE.MeshStandardMaterial({ color: 0x36d6ff, emissive: 0x36d6ff, emissiveIntensity: 1.4 }),
  );
  strip.position.set(0, 0.85, COUNTER_Z + 0.41);
  scene.add(strip);
  // Glasses on the counter so it reads as a bar at a glance.
  const glass = new THREE.MeshStandardMaterial({ color: 0xbfe6ff, transparent: true, opacity: 0.55, roughness: 0.1 });
  for (const x of [-2.9, -0.6, 0.5, 2.1]) {
    const cup = new THREE.Mesh(new THREE.CylinderGeometry(0.06, 0.05, 0.16, 10), glass);
    cup.position.set(x, 1.21, COUNTER_Z + 0.1);
    scene.add(cup);
  }
}

function addShelves(THREE, scene) {
  const plank = new THREE.MeshStandardMaterial({ color: 0x3a2a22, roughness: 0.8 });
  const bottleColours = [0x3fbf6a, 0xe0962e, 0x36d6ff, 0xd94a8c, 0xf2d25c];
  for (const [row, y] of [1.7, 2.3].entries()) {
    const shelf = new THREE.Mesh(new THREE.BoxGeometry(6, 0.06, 0.35), plank);
    shelf.position.set(0, y, -3.8);
    scene.add(shelf);
    for (let i = 0; i < 14; i += 1) {
      const colour = bottleColours[(i + row * 2) % bottleColours.length];
      const bottle = new THREE.Mesh(
        new THREE.CylinderGeometry(0.06, 0.07, 0.32, 8),
        new THREE.MeshStandardMaterial({ color: colour, emissive: colour, emissiveIntensity: 0.35, roughness: 0.2 }),
      );
      bottle.position.set(-2.7 + i * 0.42, y + 0.19, -3.75);
      scene.add(bottle);
    }
  }
}

function addStools(THREE, scene) {
  const metal = new THREE.MeshStandardMaterial({ color: 0x8893a8, roughness: 0.4, metalness: 0.8 });
  const seat = new THREE.MeshStandardMaterial({ color: 0x8c2f39, roughness: 0.7 });
  for (const x of [-3.1, -0.1, 2.9]) {
    const leg = new THREE.Mesh(new THREE.CylinderGeometry(0.05, 0.08, 0.75, 8), metal);
    leg.position.set(x, 0.375, COUNTER_Z + 0.95);
    scene.add(leg);
    const cushion = new THREE.Mesh(new THREE.CylinderGeometry(0.25, 0.25, 0.1, 16), seat);
    cushion.position.set(x, 0.8, COUNTER_Z + 0.95);
    scene.add(cushion);
  }
}

function addViewport(THREE, scene) {
  const frame = new THREE.Mesh(
    new THREE.TorusGeometry(1.0, 0.08, 8, 40),
    new THREE.MeshStandardMaterial({ color: 0x8893a8, metalness: 0.8, roughness: 0.3 }),
  );
  frame.position.set(4.4, 3.3, -3.95);
  scene.add(frame);
  const glass = new THREE.Mesh(
    new THREE.CircleGeometry(1.0, 40),
    new THREE.MeshBasicMaterial({ color: 0x050814 }),
  );
  glass.position.set(4.4, 3.3, -3.97);
  scene.add(glass);
  const points = [];
  // A fixed pseudo-random pattern: the same stars on every load.
  let seed = 7;
  const next = () => {
    seed = (seed * 16807) % 2147483647;
    return seed / 2147483647;
  };
  while (points.length < 60 * 3) {
    const angle = next() * Math.PI * 2;
    const radius = Math.sqrt(next()) * 0.92;
    points.push(4.4 + Math.cos(angle) * radius, 3.3 + Math.sin(angle) * radius, -3.96);
  }
  const stars = new THREE.BufferGeometry();
  stars.setAttribute("position", new THREE.Float32BufferAttribute(points, 3));
  scene.add(new THREE.Points(stars, new THREE.PointsMaterial({ color: 0xffffff, size: 0.035 })));
}
