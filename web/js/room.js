// A plain room: the look of any place the game does not describe (a scaffolded game's stall,
// a station other than Omega's bar). Floor, walls and light; the figures bring the rest.

/** Add the room to `scene` (a THREE.Group); `world` gets its background and fog. */
export function buildRoom(THREE, scene, world) {
  world.background = new THREE.Color(0x10141c);
  world.fog = new THREE.Fog(0x10141c, 10, 24);
  scene.add(new THREE.HemisphereLight(0xc8d2e6, 0x1e1a16, 1.4));
  const key = new THREE.DirectionalLight(0xfff4e6, 1.5);
  key.position.set(3, 6, 5);
  scene.add(key);

  addShell(THREE, scene, {
    floor: { color: 0x2e2a26, roughness: 0.9 },
    grid: [0x4a443d, 0x3d3833],
    wall: { color: 0x4a4540, roughness: 0.95 },
  });
}

/** The floor, its grid and three walls every place stands in; `look` gives their materials
 * (`floor` and `wall`: MeshStandardMaterial parameters, `grid`: its two line colours). */
export function addShell(THREE, scene, look) {
  const floor = new THREE.Mesh(
    new THREE.PlaneGeometry(24, 16),
    new THREE.MeshStandardMaterial(look.floor),
  );
  floor.rotation.x = -Math.PI / 2;
  scene.add(floor);
  const tiles = new THREE.GridHelper(24, 24, look.grid[0], look.grid[1]);
  tiles.position.y = 0.002;
  scene.add(tiles);

  const wallMaterial = new THREE.MeshStandardMaterial(look.wall);
  const back = new THREE.Mesh(new THREE.PlaneGeometry(24, 6), wallMaterial);
  back.position.set(0, 3, -4);
  scene.add(back);
  for (const side of [-1, 1]) {
    const wall = new THREE.Mesh(new THREE.PlaneGeometry(16, 6), wallMaterial);
    wall.rotation.y = -side * Math.PI / 2;
    wall.position.set(side * 7, 3, 2);
    scene.add(wall);
  }
}
