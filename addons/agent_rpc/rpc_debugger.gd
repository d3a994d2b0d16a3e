@tool
extends EditorDebuggerPlugin
## Captures what the running game reports: the Output panel's error lines, the Debugger's
## Errors tab and debugger breaks. Breakpoints set by the agent are replayed to new sessions.
## It never stops or resumes play: that is the agent's decision (godot_stop_scene).

signal play_error(severity: String, message: String)

const TAB_NAME := "Agent RPC"
const LEVEL_ERROR := 1
const LEVEL_WARNING := 3
const SCAN_INTERVAL_MS := 250

var break_count := 0
var last_break_reason := ""

var _breakpoints := {}
var _hooked := {}
var _error_trees: Array[Tree] = []
var _seen := {}
var _last_scan := 0


func _has_capture(capture: String) -> bool:
	return capture == "agent_rpc"


func _capture(_message: String, _data: Array, _session_id: int) -> bool:
	return false


func _setup_session(session_id: int) -> void:
	var session := get_session(session_id)
	if session == null:
		return
	session.started.connect(_on_session_started.bind(session_id))
	session.breaked.connect(_on_session_breaked)
	# The tab gives us a node inside the session's ScriptEditorDebugger, whose signals and
	# Errors tree carry what the game reports. It may enter the tree only once the debugger
	# panel is built, so hooking waits for that.
	var tab := Label.new()
	tab.name = TAB_NAME
	tab.text = "Agent RPC forwards this session's errors to the agent."
	tab.tree_entered.connect(_hook_debugger.bind(tab))
	session.add_session_tab(tab)
	if tab.is_inside_tree():
		_hook_debugger(tab)


## Scan the Errors trees for new entries; call it every frame.
func poll() -> void:
	var now := Time.get_ticks_msec()
	if now - _last_scan < SCAN_INTERVAL_MS:
		return
	_last_scan = now
	for tree in _error_trees:
		if is_instance_valid(tree):
			_scan_tree(tree)


## Enable or disable a line breakpoint in every session; returns how many sessions got it.
func set_line_breakpoint(file: String, line: int, enabled: bool) -> int:
	var key := "%s:%d" % [file, line]
	if enabled:
		_breakpoints[key] = {"file": file, "line": line}
	else:
		_breakpoints.erase(key)
	var applied := 0
	for session in get_sessions():
		session.set_breakpoint(file, line, enabled)
		applied += 1
	return applied


## Sessions, breaks and pending breakpoints for get_debugger_state.
func state() -> Dictionary:
	var sessions := []
	for session in get_sessions():
		sessions.append(
			{
				"active": session.is_active(),
				"breaked": session.is_breaked(),
				"debuggable": session.is_debuggable(),
			}
		)
	return {
		"sessions": sessions,
		"breakCount": break_count,
		"lastBreakReason": last_break_reason,
		"pendingBreakpoints": _breakpoints.values(),
		"hookedDebuggers": _hooked.size(),
	}


func _on_session_started(session_id: int) -> void:
	var session := get_session(session_id)
	if session == null:
		return
	for entry in _breakpoints.values():
		session.set_breakpoint(str(entry["file"]), int(entry["line"]), true)


func _on_session_breaked(_can_debug: bool) -> void:
	break_count += 1


func _hook_debugger(tab: Control) -> void:
	var node := tab.get_parent()
	while node != null and not node.is_class("ScriptEditorDebugger"):
		node = node.get_parent()
	if node == null or _hooked.has(node.get_instance_id()):
		return
	_hooked[node.get_instance_id()] = true
	if node.has_signal("output"):
		node.connect("output", _on_output)
	if node.has_signal("breaked"):
		node.connect("breaked", _on_debugger_breaked)
	for found in node.find_children("*", "Tree", true, false):
		var tree := found as Tree
		_error_trees.append(tree)
		_seen[tree.get_instance_id()] = _error_items(tree).size()


# Newer editors emit (message, level); older ones only the message, so level defaults.
func _on_output(message: String = "", level: int = -1) -> void:
	var text := message.strip_edges()
	if text == "":
		return
	var upper := text.to_upper()
	if level == LEVEL_ERROR or upper.begins_with("ERROR") or upper.begins_with("SCRIPT ERROR"):
		play_error.emit("error", text)
	elif level == LEVEL_WARNING or upper.begins_with("WARNING"):
		play_error.emit("warning", text)


func _on_debugger_breaked(
	really_did: bool = false,
	_can_debug: bool = false,
	reason: String = "",
	_has_stackdump: bool = false
) -> void:
	if not really_did or reason == "":
		return
	last_break_reason = reason
	# A script error pauses the game in the debugger; a user breakpoint is not an error.
	if not reason.to_lower().contains("breakpoint"):
		play_error.emit("error", "Debugger break: %s" % reason)


func _scan_tree(tree: Tree) -> void:
	var items := _error_items(tree)
	var id := tree.get_instance_id()
	var seen := int(_seen.get(id, 0))
	if items.size() < seen:
		# A new run cleared the Errors tab.
		seen = 0
	for index in range(seen, items.size()):
		var item: TreeItem = items[index]
		var severity := "warning" if item.has_meta("_is_warning") else "error"
		play_error.emit(severity, _describe(item))
	_seen[id] = items.size()


func _error_items(tree: Tree) -> Array[TreeItem]:
	var found: Array[TreeItem] = []
	var root := tree.get_root()
	if root == null:
		return found
	for item in root.get_children():
		if item.has_meta("_is_error") or item.has_meta("_is_warning"):
			found.append(item)
	return found


func _describe(item: TreeItem) -> String:
	var text := item.get_text(1)
	for child in item.get_children():
		var label := child.get_text(0)
		if label.contains("Source"):
			return "%s (%s)" % [text, child.get_text(1)]
	return text
