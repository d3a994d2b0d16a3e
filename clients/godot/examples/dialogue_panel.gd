extends Control
## A minimal dialogue panel that renders every frame type the StarHarness autoload emits.
##
## Scene: a Control with children Npc (Label), Line (RichTextLabel), Options (VBoxContainer),
## Say (LineEdit), Log (RichTextLabel), Hud (Label), News (Label).
## Call talk_to("smuggler") from your game when the player walks up to an NPC, or
## talk_to_group(["smuggler", "dock_master"]) for several at once (a scene: each line is
## shown under its speaker's name, and say_to picks whom the player's words are for). On a
## harness of revision 3 the scene is shared with other players there who talk to the same
## NPCs; their lines show under their name, marked as a player's.

const MOOD_COLOURS := {
	"friendly": Color.PALE_GREEN,
	"pleased": Color.LIGHT_GREEN,
	"amused": Color.AQUAMARINE,
	"neutral": Color.WHITE,
	"wary": Color.PLUM,
	"annoyed": Color.ORANGE,
	"hostile": Color.INDIAN_RED,
}
## Offers (options that commit a trade when picked) stand out from ordinary replies.
const OFFER_COLOUR := Color.GOLD
## Another player's name in a shared scene: never an NPC's look.
const PLAYER_COLOUR := Color.HOT_PINK
## Option ids that mean the player leaves: hear the farewell, then walk away.
const LEAVE_OPTION_IDS := ["bye", "leave"]

var _encounter_id := ""
var _busy := false
var _leaving := false
## In a scene: the NPC the player's typed words go to ("" = everyone: the harness picks).
var _addressee := ""
## In a shared scene: the other players in it (id -> name), as `scene_players` last said.
var _players := {}
var _players_known := false

@onready var _npc: Label = $Npc
@onready var _line: RichTextLabel = $Line
@onready var _options: VBoxContainer = $Options
@onready var _say: LineEdit = $Say
@onready var _log: RichTextLabel = $Log
@onready var _hud: Label = $Hud
@onready var _news: Label = $News


func _ready() -> void:
	StarHarness.welcome.connect(_on_welcome)
	StarHarness.encounter_opened.connect(_on_encounter_opened)
	StarHarness.scene_opened.connect(_on_scene_opened)
	StarHarness.speaker.connect(_on_speaker)
	StarHarness.say_delta.connect(_on_say_delta)
	StarHarness.say_end.connect(_on_say_end)
	StarHarness.options.connect(_on_options)
	StarHarness.action.connect(_on_action)
	StarHarness.encounter_idle.connect(_on_encounter_idle)
	StarHarness.scene_players.connect(_on_scene_players)
	StarHarness.error.connect(_on_error)
	StarHarness.world_event.connect(_on_world_event)
	StarHarness.hud.connect(_on_hud)
	StarHarness.disconnected.connect(_on_disconnected)
	_say.text_submitted.connect(_on_text_submitted)
	hide()


## The player walks up to an NPC: open an encounter and show the panel.
func talk_to(npc_id: String) -> void:
	_opened(StarHarness.open_encounter(npc_id))


## The player walks up to several NPCs at once (1 to 4 ids, all in one place).
func talk_to_group(npc_ids: Array) -> void:
	_addressee = ""
	var join := StarHarness.revision >= StarHarness.SHARED_SCENES_REVISION
	_opened(StarHarness.open_scene(npc_ids, join))


func _opened(encounter_id: String) -> void:
	_encounter_id = encounter_id
	_players = {}
	_players_known = false
	if _encounter_id == "":
		return
	_npc.text = ""
	_line.clear()
	_set_busy(true)
	show()


## In a scene: the NPC the player's next typed words are for ("" for everyone).
func address(npc_id: String) -> void:
	_addressee = npc_id


## The player walks away: close the encounter and hide the panel.
func walk_away() -> void:
	if _encounter_id != "":
		StarHarness.close_encounter(_encounter_id)
	_encounter_id = ""
	_npc.text = ""
	hide()


func _on_welcome(_protocol: int, hud: Dictionary, npcs: Array) -> void:
	_hud.text = _hud_text(hud)
	_log.append_text("%d people here\n" % npcs.size())


func _on_encounter_opened(id: String, npc_name: String, attitude: int) -> void:
	if id == _encounter_id and _npc.text == "":
		_npc.text = "%s (attitude %d)" % [npc_name, attitude]


func _on_scene_opened(id: String, npcs: Array) -> void:
	if id != _encounter_id:
		return
	var names: PackedStringArray = []
	for npc: Dictionary in npcs:
		names.append("%s (attitude %d)" % [npc.get("name", ""), int(npc.get("attitude", 0))])
	_npc.text = " & ".join(names)


func _on_speaker(id: String, speaker_id: String, speaker_name: String) -> void:
	# Another NPC of the scene (or another player) speaks: their line starts on its own line,
	# under their name; a player's name is marked and coloured apart from the NPCs'.
	if id != _encounter_id:
		return
	var player := StarHarness.is_other_player(speaker_id)
	if player:
		# Their line opens a round of theirs: a fresh line, and input waits for the floor.
		_line.clear()
		_set_busy(true)
	if not _line.get_parsed_text().is_empty():
		_line.newline()
	if player:
		_line.push_color(PLAYER_COLOUR)
	_line.push_bold()
	_line.add_text("%s%s: " % [speaker_name, " (player)" if player else ""])
	_line.pop()
	if player:
		_line.pop()


func _on_say_delta(id: String, text: String) -> void:
	if id == _encounter_id:
		_line.add_text(text)


func _on_say_end(id: String, mood: String) -> void:
	# Another player's line has no NPC's mood.
	if id == _encounter_id and not StarHarness.is_other_player(StarHarness.last_speaker(id)):
		_npc.modulate = MOOD_COLOURS.get(mood, Color.WHITE)


func _on_options(id: String, items: Array) -> void:
	if id != _encounter_id:
		return
	for child in _options.get_children():
		child.queue_free()
	for item: Dictionary in items:
		var button := Button.new()
		var offer := StarHarness.offer_of(item)
		if offer.is_empty():
			button.text = str(item.get("label", ""))
		else:
			# An offer commits a trade when picked: say what it costs and that this accepts it.
			var cost := str(offer.get("cost", ""))
			var terms := " (you give %s)" % cost if cost != "" else ""
			button.text = "OFFER: %s%s  [Accept]" % [item.get("label", ""), terms]
			button.add_theme_color_override("font_color", OFFER_COLOUR)
		button.pressed.connect(_on_option_pressed.bind(str(item.get("id", ""))))
		_options.add_child(button)


func _on_action(id: String, action_name: String, ok: bool, summary: String) -> void:
	if id == _encounter_id:
		var mark := "✔" if ok else "✘ refused"
		_log.append_text("%s %s: %s\n" % [mark, action_name, summary])


func _on_encounter_idle(id: String) -> void:
	if id != _encounter_id:
		return
	if _leaving:
		_leaving = false
		walk_away()
		return
	_set_busy(false)


## Who joined or left a shared scene: a quiet line in the log, not anyone's words.
func _on_scene_players(id: String, players: Array) -> void:
	if id != _encounter_id:
		return
	var now := {}
	for player: Dictionary in players:
		var player_id := str(player.get("id", ""))
		if player_id != "" and player_id != StarHarness.player_id:
			now[player_id] = str(player.get("name", player_id))
	for player_id: String in now:
		if not _players_known:
			_log.append_text("(%s is here)\n" % now[player_id])
		elif not _players.has(player_id):
			_log.append_text("(%s joined)\n" % now[player_id])
	for player_id: String in _players:
		if not now.has(player_id):
			_log.append_text("(%s left)\n" % _players[player_id])
	_players = now
	_players_known = true


func _on_error(id: String, code: String, message: String) -> void:
	_log.append_text("[%s] %s\n" % [code, message])
	if id == _encounter_id and code in ["unknown_encounter", "unknown_npc", "npc_unavailable"]:
		walk_away()
	elif id == _encounter_id and code in ["busy", "bad_option", "limit"]:
		_set_busy(false)


func _on_world_event(location_id: String, headline: String) -> void:
	_news.text = "%s: %s" % [location_id, headline]


func _on_hud(player_id: String, data: Dictionary) -> void:
	if player_id == StarHarness.player_id:
		_hud.text = _hud_text(data)


func _on_disconnected(_code: int, _reason: String) -> void:
	# Encounters do not survive a reconnect.
	_encounter_id = ""
	hide()


func _on_text_submitted(text: String) -> void:
	if _busy or _encounter_id == "" or text.strip_edges() == "":
		return
	_line.clear()
	_say.clear()
	_set_busy(true)
	if _addressee != "":
		StarHarness.say_to(_encounter_id, _addressee, text)
	else:
		StarHarness.say(_encounter_id, text)


func _on_option_pressed(option_id: String) -> void:
	if _busy or _encounter_id == "":
		return
	_line.clear()
	_set_busy(true)
	_leaving = option_id in LEAVE_OPTION_IDS
	StarHarness.say_option(_encounter_id, option_id)


func _set_busy(busy: bool) -> void:
	_busy = busy
	_say.editable = not busy
	for button: Button in _options.get_children():
		button.disabled = busy


static func _hud_text(data: Dictionary) -> String:
	var parts: PackedStringArray = []
	for key: String in data:
		parts.append("%s %s" % [key, str(data[key])])
	return " · ".join(parts)
