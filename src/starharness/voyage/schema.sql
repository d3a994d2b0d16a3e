-- Omega station: the world's rules, written as tables.
--
-- Every table is STRICT, and CHECK constraints make impossible states impossible: nobody holds
-- negative credits, a market never sells stock it does not have, a hold never contains a negative
-- number of crates, an attitude stays within -100..100. The store checks these rules first to give
-- clear errors; the constraints are the backstop that holds even for raw SQL.
--
-- The store stamps PRAGMA application_id and user_version after this script runs; bump the
-- version in store/schema_text.py whenever this file changes. On PostgreSQL, store/pg_schema.py
-- translates this text (STRICT dropped, INTEGER as bigint, ...) into the schema `voyage`.

-- Places an actor can be. Meeting someone means being at the same location.
CREATE TABLE locations (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT ''
) STRICT;

-- What can be traded. base_price is the long-run price that market prices drift around.
CREATE TABLE goods (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    base_price  INTEGER NOT NULL CHECK (base_price > 0),
    contraband  INTEGER NOT NULL DEFAULT 0 CHECK (contraband IN (0, 1))
) STRICT;

-- Players and NPCs. An NPC's persona is its character sheet, sent with every request.
CREATE TABLE actors (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    kind        TEXT NOT NULL CHECK (kind IN ('player', 'npc')),
    archetype   TEXT NOT NULL,
    location_id TEXT NOT NULL REFERENCES locations (id),
    alive       INTEGER NOT NULL DEFAULT 1 CHECK (alive IN (0, 1)),
    credits     INTEGER NOT NULL DEFAULT 0 CHECK (credits >= 0),
    persona     TEXT NOT NULL DEFAULT ''
) STRICT;

-- How an NPC feels about someone: -100 (hostile) .. 100 (trusted). No row means 0.
CREATE TABLE attitudes (
    npc_id      TEXT NOT NULL REFERENCES actors (id),
    target_id   TEXT NOT NULL REFERENCES actors (id),
    score       INTEGER NOT NULL CHECK (score BETWEEN -100 AND 100),
    PRIMARY KEY (npc_id, target_id)
) STRICT;

-- What an NPC remembers about someone. text is the NPC's own words; the structured fields let
-- the scene fold old memories into totals. price is the total number of credits that changed
-- hands (for a trade: qty units for price credits). ref names a quest or intel item. weight is
-- how many memories the row stands for: old ones of a pair are folded into one row per kind,
-- action and good (their qty and price summed), so a pair keeps a bounded number of rows.
-- importance (0..100) decides what is quoted and what is passed on; source_id is whose deal
-- the NPC witnessed or who told it; hops counts retellings (0: lived or seen); origin_id is the
-- memory a witnessed or retold one stems from, so nobody hears the same happening twice.
CREATE TABLE memories (
    id          INTEGER PRIMARY KEY,
    npc_id      TEXT NOT NULL REFERENCES actors (id),
    about_id    TEXT NOT NULL REFERENCES actors (id),
    day         INTEGER NOT NULL CHECK (day >= 1),
    kind        TEXT NOT NULL,
    text        TEXT NOT NULL,
    action      TEXT,
    good_id     TEXT REFERENCES goods (id),
    qty         INTEGER CHECK (qty IS NULL OR qty >= 0),
    price       INTEGER CHECK (price IS NULL OR price >= 0),
    ref         TEXT,
    weight      INTEGER NOT NULL DEFAULT 1 CHECK (weight >= 1),
    importance  INTEGER NOT NULL DEFAULT 10 CHECK (importance BETWEEN 0 AND 100),
    source_id   TEXT,
    hops        INTEGER NOT NULL DEFAULT 0 CHECK (hops >= 0),
    origin_id   INTEGER
) STRICT;
CREATE INDEX memories_by_npc_about ON memories (npc_id, about_id, id);
CREATE INDEX memories_by_origin ON memories (origin_id);
-- Gossip weighs each NPC's newest memories about anyone: read newest first, never all.
CREATE INDEX memories_by_npc ON memories (npc_id, id);

-- Each location's exchange: the going price (the centre of every haggle there) and the units
-- the exchange holds, from which the traders there restock. Stock drifts back to target_stock.
CREATE TABLE market (
    location_id  TEXT NOT NULL REFERENCES locations (id),
    good_id      TEXT NOT NULL REFERENCES goods (id),
    price        INTEGER NOT NULL CHECK (price > 0),
    stock        INTEGER NOT NULL CHECK (stock >= 0),
    target_stock INTEGER NOT NULL CHECK (target_stock >= 0),
    PRIMARY KEY (location_id, good_id)
) STRICT;

-- What an NPC trades in: sells (from its own hold), buys (into its own hold, with its credits),
-- and the level it restocks its hold to from the local exchange as days pass.
CREATE TABLE trade_lines (
    npc_id      TEXT NOT NULL REFERENCES actors (id),
    good_id     TEXT NOT NULL REFERENCES goods (id),
    sells       INTEGER NOT NULL CHECK (sells IN (0, 1)),
    buys        INTEGER NOT NULL CHECK (buys IN (0, 1)),
    restock_to  INTEGER NOT NULL DEFAULT 0 CHECK (restock_to >= 0),
    PRIMARY KEY (npc_id, good_id),
    CHECK (sells = 1 OR buys = 1)
) STRICT;

-- Who holds what. A row at 0 is removed by the store; a negative row cannot exist.
CREATE TABLE cargo (
    actor_id    TEXT NOT NULL REFERENCES actors (id),
    good_id     TEXT NOT NULL REFERENCES goods (id),
    qty         INTEGER NOT NULL CHECK (qty >= 0),
    PRIMARY KEY (actor_id, good_id)
) STRICT;

-- Passage between locations, and who sells a berth on it.
CREATE TABLE routes (
    from_id     TEXT NOT NULL REFERENCES locations (id),
    to_id       TEXT NOT NULL REFERENCES locations (id),
    seller_id   TEXT NOT NULL REFERENCES actors (id),
    fare        INTEGER NOT NULL CHECK (fare >= 0),
    days        INTEGER NOT NULL CHECK (days >= 1),
    PRIMARY KEY (from_id, to_id),
    CHECK (from_id <> to_id)
) STRICT;

-- Rumours and route intel an NPC can sell, once the player is trusted enough.
CREATE TABLE intel (
    id           TEXT PRIMARY KEY,
    npc_id       TEXT NOT NULL REFERENCES actors (id),
    kind         TEXT NOT NULL CHECK (kind IN ('rumour', 'route')),
    title        TEXT NOT NULL,
    text         TEXT NOT NULL,
    price        INTEGER NOT NULL CHECK (price >= 0),
    min_attitude INTEGER NOT NULL CHECK (min_attitude BETWEEN -100 AND 100)
) STRICT;

-- Jobs. An open quest waits on its giver's board with no player; once accepted it belongs to
-- one player. A deliver quest holds when the player, meeting the giver, has qty of good_id.
CREATE TABLE quests (
    id           TEXT PRIMARY KEY,
    giver_id     TEXT NOT NULL REFERENCES actors (id),
    player_id    TEXT REFERENCES actors (id),
    kind         TEXT NOT NULL CHECK (kind IN ('deliver')),
    title        TEXT NOT NULL,
    good_id      TEXT NOT NULL REFERENCES goods (id),
    qty          INTEGER NOT NULL CHECK (qty > 0),
    reward       INTEGER NOT NULL CHECK (reward >= 0),
    min_attitude INTEGER NOT NULL DEFAULT -100 CHECK (min_attitude BETWEEN -100 AND 100),
    status       TEXT NOT NULL CHECK (status IN ('open', 'accepted', 'completed', 'failed')),
    accepted_day INTEGER,
    closed_day   INTEGER,
    CHECK ((status = 'open') = (player_id IS NULL))
) STRICT;

-- Every attempted action, accepted or refused. Ids are not foreign keys: a refusal for an
-- unknown actor is worth recording too.
CREATE TABLE audit (
    id          INTEGER PRIMARY KEY,
    day         INTEGER NOT NULL,
    at          REAL NOT NULL,
    action      TEXT NOT NULL,
    actor_id    TEXT NOT NULL,
    target_id   TEXT,
    args        TEXT NOT NULL CHECK (json_valid(args)),
    ok          INTEGER NOT NULL CHECK (ok IN (0, 1)),
    reason      TEXT,
    summary     TEXT
) STRICT;
-- "Once a day" guards count today's rows of one action: without it, every such check read the
-- whole audit, which only grows (33-44 ms at 300,000 rows).
CREATE INDEX audit_by_action_day ON audit (action, day);

-- News: what happened where, for clients' headlines and later scenes.
CREATE TABLE world_events (
    id          INTEGER PRIMARY KEY,
    day         INTEGER NOT NULL CHECK (day >= 1),
    location_id TEXT NOT NULL REFERENCES locations (id),
    kind        TEXT NOT NULL,
    headline    TEXT NOT NULL
) STRICT;
CREATE INDEX world_events_by_place ON world_events (location_id, id);

-- The world clock: one row, the current day.
CREATE TABLE clock (
    id          INTEGER PRIMARY KEY CHECK (id = 1),
    day         INTEGER NOT NULL CHECK (day >= 1)
) STRICT;
