@tool
extends RefCounted
## Play methods: run and stop scenes, read play errors, debugger state and breakpoints.
## Nothing here stops play on its own; the agent decides when to call stop_scene.

const RpcProtocol := preload("res://addons/agent_rpc/rpc_protocol.gd")
const RpcErrors := preload("res://addons/agent_rpc/rpc_errors.gd")
const RpcDebugger := preload("res://addons/agent_rpc/rpc_debugger.gd")

const DEFAULT_WAIT_MS := 3000
const MAX_WAIT_MS := 15000
const POLL_SECONDS := 0.05
const EARLY_ERROR_MS := 200
const EARLY_EXIT_MS := 400

var _tree: SceneTree
var _errors: RpcErrors
var _debugger: RpcDebugger
var _running := false


func _init(context: Dictionary) -> void:
	_tree = context["tree"]
	_errors = context["errors"]
	_debugger = context["debugger"]


func rpc_run_current_scene(request: Dictionary, reply: Callable) -> void:
	if EditorInterface.get_edited_scene_root() == null:
		reply.call(RpcProtocol.fail("no edited scene"))
		return
	await _run(request, reply, "play_current_scene")


func rpc_play_main_scene(request: Dictionary, reply: Callable) -> void:
	var main_scene := str(ProjectSettings.get_setting("application/run/main_scene", ""))
	if main_scene == "":
		reply.call(
			RpcProtocol.fail(
				"no main scene set (Project Settings > Application > Run > Main Scene)"
			)
		)
		return
	await _run(request, reply, "play_main_scene")


func rpc_stop_scene(_request: Dictionary, reply: Callable) -> void:
	var was_playing := EditorInterface.is_playing_scene()
	EditorInterface.stop_playing_scene()
	reply.call(RpcProtocol.ok({"stopped": true, "wasPlaying": was_playing}))


func rpc_get_play_errors(request: Dictionary, reply: Callable) -> void:
	var errors := _errors.snapshot()
	var clear := bool(request.get("clear", false))
	if clear:
		_errors.clear()
	reply.call(
		RpcProtocol.ok(
			{"playing": EditorInterface.is_playing_scene(), "errors": errors, "cleared": clear}
		)
	)


func rpc_get_debugger_state(_request: Dictionary, reply: Callable) -> void:
	var state := _debugger.state()
	state["playing"] = EditorInterface.is_playing_scene()
	state["playingScene"] = EditorInterface.get_playing_scene()
	state["errors"] = _errors.snapshot()
	reply.call(RpcProtocol.ok(state))


func rpc_set_breakpoint(request: Dictionary, reply: Callable) -> void:
	var file := str(request.get("file", ""))
	var line := maxi(1, int(request.get("line", 1)))
	var enabled := not bool(request.get("remove", false))
	var condition := str(request.get("condition", ""))
	if file == "" or not FileAccess.file_exists(file):
		reply.call(RpcProtocol.fail("script not found: %s" % file))
		return
	var sessions := _debugger.set_line_breakpoint(file, line, enabled)
	reply.call(
		RpcProtocol.ok(
			{
				"file": file,
				"line": line,
				"enabled": enabled,
				"sessions": sessions,
				"conditionIgnored": condition != "",
			}
		)
	)


func _run(request: Dictionary, reply: Callable, play_method: String) -> void:
	if _running:
		reply.call(RpcProtocol.fail("run already in progress"))
		return
	_running = true
	var wait_ms := _wait_ms(request.get("wait_ms", DEFAULT_WAIT_MS))
	_errors.clear()
	if play_method == "play_main_scene":
		EditorInterface.play_main_scene()
	else:
		EditorInterface.play_current_scene()
	var started := Time.get_ticks_msec()
	var was_playing := false
	while Time.get_ticks_msec() - started < wait_ms:
		await _tree.create_timer(POLL_SECONDS).timeout
		var elapsed := Time.get_ticks_msec() - started
		var playing := EditorInterface.is_playing_scene()
		was_playing = was_playing or playing
		# Stop waiting early when the game already ended: with errors, or after it ran.
		var crashed := elapsed > EARLY_ERROR_MS and _errors.size() > 0
		if not playing and (crashed or (was_playing and elapsed > EARLY_EXIT_MS)):
			break
	_running = false
	reply.call(
		RpcProtocol.ok(
			{
				"started": true,
				"playing": EditorInterface.is_playing_scene(),
				"waitMs": wait_ms,
				"playMethod": play_method,
				"errors": _errors.snapshot(),
			}
		)
	)


func _wait_ms(value: Variant) -> int:
	if typeof(value) != TYPE_INT and typeof(value) != TYPE_FLOAT:
		return DEFAULT_WAIT_MS
	return clampi(int(value), 0, MAX_WAIT_MS)
