extends Node
## A thin client for the star-harness frame protocol v1 (docs/protocol.md).
##
## Connects a WebSocketPeer to the harness, polls it in _process (so every signal fires on the
## main thread), sends `hello`, and emits ONE signal per down frame type. Reconnects with
## exponential backoff; encounters do not survive a reconnect, so `disconnected` means
## "close your dialogue UI". The harness owns the world: render what arrives, never apply it.

## `welcome`: the protocol version, the player's HUD and the NPCs there are
## (each `{id, name, locationId}`).
signal welcome(protocol: int, hud: Dictionary, npcs: Array)
## `encounter.opened`: show the NPC at once, before any line arrives.
signal encounter_opened(id: String, npc_name: String, attitude: int)
## `say.delta`: append `text` to the NPC's line (typewriter).
signal say_delta(id: String, text: String)
## `say.end`: the line is complete; switch face or voice by `mood`.
signal say_end(id: String, mood: String)
## `options`: replies the player may pick, each `{id, label}`; empty means free text only.
## An item that is an offer also has `offer: {action, cost}` (see `offer_of`): picking it
## accepts a trade the NPC proposed, so show it apart, with its cost and an Accept button.
signal options(id: String, items: Array)
## `action`: presentation only, the change is already committed (`ok == false`: refused).
signal action(id: String, action_name: String, ok: bool, summary: String)
## `encounter.idle`: the turn is over; re-enable the player's input.
signal encounter_idle(id: String)
## `scene.players`: who is in a shared scene now (revision 3), each `{id, name}`, the
## player among them; sent when a player joins or leaves. Diff it to say who came or went.
signal scene_players(id: String, players: Array)
## `error`: `id` is "" when no encounter is concerned; `code` is from a closed set.
signal error(id: String, code: String, message: String)
## `world.event`: news for a ticker.
signal world_event(location_id: String, headline: String)
## `hud`: replace the whole HUD of `player_id` with `data`.
signal hud(player_id: String, data: Dictionary)
## A scene (several NPCs in one encounter, see `open_scene`) opened: `npcs` is each
## `{id, name, attitude}`; `encounter_opened` follows with the first speaker's name.
signal scene_opened(id: String, npcs: Array)
## In a scene, the NPC the next frames come from changed (emitted before that frame's own
## signal): show `speaker_name` over the line that `say_delta` then types out. In a shared
## scene (revision 3) it may be another player (`is_other_player`): their name, from the
## frame's `speakerName`; show it apart from the NPCs'.
signal speaker(id: String, speaker_id: String, speaker_name: String)
## Every parsed frame, also of types this client does not know (a newer harness).
signal frame_received(frame: Dictionary)
## The socket is open and `hello` was sent.
signal connected
## The socket closed; a reconnect is scheduled. Open encounters are gone.
signal disconnected(code: int, reason: String)

enum Link { IDLE, CONNECTING, OPEN, WAITING }

const DEFAULT_URL := "ws://127.0.0.1:3099/gh"
const DEFAULT_PLAYER_ID := "player-1"
const SETTING_URL := "star_harness/url"
const SETTING_PLAYER_ID := "star_harness/player_id"
const SETTING_AUTO_CONNECT := "star_harness/auto_connect"
const SETTING_TOKEN_ENV := "star_harness/token_env"
const FIRST_BACKOFF_MS := 500
const MAX_BACKOFF_MS := 15000
const CONNECT_TIMEOUT_MS := 5000
## A welcome with many NPCs or a long line can exceed WebSocketPeer's 64 KiB default.
const INBOUND_BUFFER_BYTES := 4 * 1024 * 1024
const CLOSE_NORMAL := 1000
## The protocol revision whose scenes several players share (`open_scene` with `join`).
const SHARED_SCENES_REVISION := 3

## The harness's frame WebSocket; set before connect_to_harness() or pass it there.
var url := DEFAULT_URL
## The player this connection acts for (sent in `hello` and every `encounter.open`).
var player_id := DEFAULT_PLAYER_ID
## Sent as `Authorization: Bearer ...` when the harness requires a token.
var token := ""
## The harness's protocol revision, from `welcome` (absent: 1). At 3 or more scenes can be
## shared by several players (`open_scene(ids, true)`).
var revision := 1

var _socket: WebSocketPeer = null
var _link := Link.IDLE
var _backoff_ms := FIRST_BACKOFF_MS
var _next_attempt_ms := 0
var _connect_started_ms := 0
var _encounters_opened := 0
## NPC id -> name, from `welcome` and each scene's `encounter.opened`.
var _npc_names := {}
## Encounter id -> the id of the NPC who spoke last in it (scenes only).
var _speakers := {}
## Other players heard in shared scenes: player id -> name (`speakerName`).
var _players := {}


func _ready() -> void:
	url = str(ProjectSettings.get_setting(SETTING_URL, DEFAULT_URL))
	player_id = str(ProjectSettings.get_setting(SETTING_PLAYER_ID, DEFAULT_PLAYER_ID))
	var token_env := str(ProjectSettings.get_setting(SETTING_TOKEN_ENV, ""))
	if token_env != "":
		token = OS.get_environment(token_env)
	if bool(ProjectSettings.get_setting(SETTING_AUTO_CONNECT, true)):
		connect_to_harness()


func _process(_delta: float) -> void:
	var now := Time.get_ticks_msec()
	match _link:
		Link.WAITING:
			if now >= _next_attempt_ms:
				_start_connect(now)
		Link.CONNECTING, Link.OPEN:
			_poll_socket(now)


func _exit_tree() -> void:
	disconnect_from_harness()


## Connect (or reconnect) to `harness_url`, acting for `as_player`; "" keeps the current value.
func connect_to_harness(harness_url := "", as_player := "") -> void:
	if harness_url != "":
		url = harness_url
	if as_player != "":
		player_id = as_player
	_close_socket()
	_backoff_ms = FIRST_BACKOFF_MS
	_start_connect(Time.get_ticks_msec())


## Close the connection and stop reconnecting.
func disconnect_from_harness() -> void:
	_close_socket()
	_link = Link.IDLE


## True while the socket is open (frames can be sent).
func is_connected_to_harness() -> bool:
	return _link == Link.OPEN


## Walk up to an NPC; returns the new encounter id ("" when not connected).
func open_encounter(npc_id: String) -> String:
	_encounters_opened += 1
	var encounter_id := "enc-%d-%d" % [Time.get_ticks_msec(), _encounters_opened]
	var frame := {"t": "encounter.open", "id": encounter_id, "npcId": npc_id, "playerId": player_id}
	return encounter_id if send_frame(frame) == OK else ""


## Walk up to several NPCs at once (1 to 4 ids, all in one place): one scene, whose frames
## name their speaker (`speaker` signal). The first NPC holds the floor first. With `join`
## (a harness of `revision` 3 or more) the player joins the scene other players at the place
## have with exactly these NPCs, or opens one they can join. Returns the encounter id ("" when
## not connected).
func open_scene(npc_ids: Array, join := false) -> String:
	if npc_ids.is_empty():
		return ""
	_encounters_opened += 1
	var encounter_id := "enc-%d-%d" % [Time.get_ticks_msec(), _encounters_opened]
	var frame := {
		"t": "encounter.open",
		"id": encounter_id,
		"npcId": str(npc_ids[0]),
		"npcIds": npc_ids,
		"playerId": player_id,
	}
	if join:
		frame["join"] = true
	return encounter_id if send_frame(frame) == OK else ""


## Say free text. Wait for `encounter_idle` first: a say during a turn gets error "busy".
func say(encounter_id: String, text: String) -> Error:
	return send_frame({"t": "encounter.say", "id": encounter_id, "text": text})


## In a scene: say free text to one of its NPCs (the others hear it too).
func say_to(encounter_id: String, npc_id: String, text: String) -> Error:
	return send_frame({"t": "encounter.say", "id": encounter_id, "text": text, "to": npc_id})


## The display name of an NPC (from `welcome` or a scene's `encounter.opened`), else its id.
func npc_name(npc_id: String) -> String:
	return str(_npc_names.get(npc_id, npc_id))


## In a shared scene: true when `speaker_id` is another player (their lines carry
## `speakerName`), not one of the NPCs.
func is_other_player(speaker_id: String) -> bool:
	return _players.has(speaker_id)


## In a scene: the id of the NPC who spoke last ("" before anyone did, or outside a scene).
func last_speaker(encounter_id: String) -> String:
	return str(_speakers.get(encounter_id, ""))


## Pick an item of the last `options` of this encounter by its `id`.
func say_option(encounter_id: String, option_id: String) -> Error:
	return send_frame({"t": "encounter.say", "id": encounter_id, "optionId": option_id})


## Walk away: a running turn is cancelled; committed actions stay committed.
func close_encounter(encounter_id: String) -> Error:
	return send_frame({"t": "encounter.close", "id": encounter_id})


## Advance the world clock; `world_event` signals follow.
func tick(days: int) -> Error:
	return send_frame({"t": "world.tick", "days": days})


## Send any up frame (a Dictionary with `t`); ERR_UNAVAILABLE while not connected.
func send_frame(frame: Dictionary) -> Error:
	if _link != Link.OPEN:
		push_warning("star-harness: not connected, dropped %s" % frame.get("t", "?"))
		return ERR_UNAVAILABLE
	return _socket.send_text(JSON.stringify(frame))


## The offer terms `{action, cost}` of an `options` item, or {} when it is an ordinary reply.
## `action` is the game action accepting commits; `cost` is what the player gives, in the
## game's words ("3,300 cr"), and may be "".
func offer_of(item: Dictionary) -> Dictionary:
	var offer: Variant = item.get("offer")
	return offer if offer is Dictionary else {}


## True when picking `item` accepts an offer (the harness commits it before the NPC answers).
func is_offer(item: Dictionary) -> bool:
	return not offer_of(item).is_empty()


func _start_connect(now: int) -> void:
	_socket = WebSocketPeer.new()
	_socket.inbound_buffer_size = INBOUND_BUFFER_BYTES
	if token != "":
		_socket.handshake_headers = PackedStringArray(["Authorization: Bearer %s" % token])
	var status := _socket.connect_to_url(url)
	if status != OK:
		push_warning("star-harness: cannot connect to %s (error %d)" % [url, status])
		_schedule_reconnect(now)
		return
	_link = Link.CONNECTING
	_connect_started_ms = now


func _poll_socket(now: int) -> void:
	_socket.poll()
	var state := _socket.get_ready_state()
	if state == WebSocketPeer.STATE_OPEN:
		if _link == Link.CONNECTING:
			_on_opened()
		_drain()
	elif state == WebSocketPeer.STATE_CLOSED:
		_on_closed(now)
	elif _link == Link.CONNECTING and now - _connect_started_ms > CONNECT_TIMEOUT_MS:
		_socket.close()
		_on_closed(now)


func _on_opened() -> void:
	_link = Link.OPEN
	_backoff_ms = FIRST_BACKOFF_MS
	if player_id != "":
		send_frame({"t": "hello", "playerId": player_id})
	connected.emit()


func _on_closed(now: int) -> void:
	var was_open := _link == Link.OPEN
	var code := _socket.get_close_code()
	var reason := _socket.get_close_reason()
	_socket = null
	_schedule_reconnect(now)
	if was_open:
		disconnected.emit(code, reason)


func _schedule_reconnect(now: int) -> void:
	_link = Link.WAITING
	_next_attempt_ms = now + _backoff_ms
	_backoff_ms = mini(_backoff_ms * 2, MAX_BACKOFF_MS)


func _close_socket() -> void:
	if _socket != null:
		_socket.close(CLOSE_NORMAL, "client closing")
		_socket = null


func _drain() -> void:
	while _socket != null and _socket.get_available_packet_count() > 0:
		var text := _socket.get_packet().get_string_from_utf8()
		var parsed: Variant = JSON.parse_string(text)
		if typeof(parsed) != TYPE_DICTIONARY:
			push_warning("star-harness: ignored a frame that is not a JSON object")
			continue
		_dispatch(parsed)


func _dispatch(frame: Dictionary) -> void:
	frame_received.emit(frame)
	var id := str(frame.get("id", ""))
	_note_speaker(id, frame)
	match str(frame.get("t", "")):
		"welcome":
			revision = int(frame.get("revision", 1))
			_remember_names(_array(frame, "npcs"))
			welcome.emit(int(frame.get("protocol", 0)), _dict(frame, "hud"), _array(frame, "npcs"))
		"encounter.opened":
			if frame.get("npcs") is Array:
				_remember_names(_array(frame, "npcs"))
				scene_opened.emit(id, _array(frame, "npcs"))
			encounter_opened.emit(id, str(frame.get("npcName", "")), int(frame.get("attitude", 0)))
		"say.delta":
			say_delta.emit(id, str(frame.get("text", "")))
		"say.end":
			say_end.emit(id, str(frame.get("mood", "")))
		"options":
			options.emit(id, _option_items(_array(frame, "items")))
		"action":
			var summary := str(frame.get("summary", ""))
			action.emit(id, str(frame.get("name", "")), bool(frame.get("ok", false)), summary)
		"encounter.idle":
			encounter_idle.emit(id)
			_speakers.erase(id)
		"scene.players":
			scene_players.emit(id, _array(frame, "players"))
		"error":
			error.emit(id, str(frame.get("code", "")), str(frame.get("message", "")))
		"world.event":
			world_event.emit(str(frame.get("locationId", "")), str(frame.get("headline", "")))
		"hud":
			hud.emit(str(frame.get("playerId", "")), _dict(frame, "data"))
		var unknown:
			push_warning("star-harness: no handler for frame type %s" % unknown)


## A scene's frame from another speaker than the last one: say who speaks before it is
## rendered. Another player's line names them (`speakerName`).
func _note_speaker(id: String, frame: Dictionary) -> void:
	var speaker_id := str(frame.get("speakerId", ""))
	var speaker_name := str(frame.get("speakerName", ""))
	if speaker_id != "" and speaker_name != "":
		_players[speaker_id] = speaker_name
	if speaker_id == "" or _speakers.get(id, "") == speaker_id:
		return
	_speakers[id] = speaker_id
	speaker.emit(id, speaker_id, str(_players.get(speaker_id, npc_name(speaker_id))))


func _remember_names(npcs: Array) -> void:
	for value: Variant in npcs:
		if value is Dictionary:
			var npc: Dictionary = value
			_npc_names[str(npc.get("id", ""))] = str(npc.get("name", ""))


## Each item as `{id, label}` with String values, plus `offer: {action, cost}` for an offer.
static func _option_items(items: Array) -> Array:
	var parsed: Array = []
	for value: Variant in items:
		if not value is Dictionary:
			continue
		var item: Dictionary = value
		var option := {"id": str(item.get("id", "")), "label": str(item.get("label", ""))}
		var offer: Variant = item.get("offer")
		if offer is Dictionary:
			var terms: Dictionary = offer
			option["offer"] = {
				"action": str(terms.get("action", "")), "cost": str(terms.get("cost", ""))
			}
		parsed.append(option)
	return parsed


static func _dict(frame: Dictionary, key: String) -> Dictionary:
	var value: Variant = frame.get(key, {})
	return value if value is Dictionary else {}


static func _array(frame: Dictionary, key: String) -> Array:
	var value: Variant = frame.get(key, [])
	return value if value is Array else []
