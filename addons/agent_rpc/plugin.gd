@tool
extends EditorPlugin
## Agent RPC: an AI agent drives this editor through the star-harness bridge.
##
## The editor connects out to the bridge on 127.0.0.1 (the bridge is the server), proves
## itself with the token from the endpoint file, then answers requests. Requests carry a
## "method"; everything else on the wire is an event. Long work runs on worker threads or
## awaits timers, so the editor never blocks while the agent waits.

const RpcProtocol := preload("res://addons/agent_rpc/rpc_protocol.gd")
const RpcConnection := preload("res://addons/agent_rpc/rpc_connection.gd")
const RpcDebugger := preload("res://addons/agent_rpc/rpc_debugger.gd")
const RpcErrors := preload("res://addons/agent_rpc/rpc_errors.gd")
const RpcWorker := preload("res://addons/agent_rpc/rpc_worker.gd")
const SceneHandlers := preload("res://addons/agent_rpc/handlers/scene_handlers.gd")
const PlayHandlers := preload("res://addons/agent_rpc/handlers/play_handlers.gd")
const ProjectHandlers := preload("res://addons/agent_rpc/handlers/project_handlers.gd")
const FilesHandlers := preload("res://addons/agent_rpc/handlers/files_handlers.gd")
const ScriptHandlers := preload("res://addons/agent_rpc/handlers/script_handlers.gd")
const ExportHandlers := preload("res://addons/agent_rpc/handlers/export_handlers.gd")

const HANDLER_PREFIX := "rpc_"

var _connection: RpcConnection
var _debugger: RpcDebugger
var _errors: RpcErrors
var _worker: RpcWorker
var _handlers: Array[Object] = []


func _enter_tree() -> void:
	_errors = RpcErrors.new()
	_worker = RpcWorker.new(get_tree())
	_debugger = RpcDebugger.new()
	add_debugger_plugin(_debugger)
	_debugger.play_error.connect(_errors.record)
	_errors.recorded.connect(_on_error_recorded)
	var context := {"tree": get_tree(), "errors": _errors, "debugger": _debugger, "worker": _worker}
	_handlers = [
		self,
		SceneHandlers.new(context),
		PlayHandlers.new(context),
		ProjectHandlers.new(context),
		FilesHandlers.new(context),
		ScriptHandlers.new(context),
		ExportHandlers.new(context),
	]
	_connection = RpcConnection.new()
	_connection.handshake = _editor_ready
	_connection.message_received.connect(_on_message)
	scene_changed.connect(_on_scene_changed)
	set_process(true)


func _exit_tree() -> void:
	set_process(false)
	scene_changed.disconnect(_on_scene_changed)
	_connection.close()
	remove_debugger_plugin(_debugger)
	_worker.shutdown()
	_handlers.clear()


func _process(_delta: float) -> void:
	_connection.poll()
	_debugger.poll()
	_worker.reap()


## The protocol-level health check.
func rpc_ping(_request: Dictionary, reply: Callable) -> void:
	reply.call(RpcProtocol.ok({"pong": true}))


func _editor_ready() -> Dictionary:
	return {
		"godotVersion": str(Engine.get_version_info().get("string", "")),
		"projectPath": ProjectSettings.globalize_path("res://"),
		"addonVersion": RpcProtocol.ADDON_VERSION,
	}


# Requests are told from events by "method" alone: list_project_files carries a "type"
# parameter, so a request may have both.
func _on_message(message: Dictionary) -> void:
	if not message.has("method"):
		return
	var request_id: Variant = message.get("id")
	var method := str(message["method"])
	var reply := _reply.bind(request_id, method)
	if not RpcProtocol.ALLOWED_METHODS.has(method):
		reply.call(RpcProtocol.fail("unknown method: %s" % method))
		return
	var handler := _handler_for(method)
	if handler == null:
		reply.call(RpcProtocol.fail("unknown method: %s" % method))
		return
	# Handlers answer through `reply`, at once or after awaiting; this call does not wait.
	handler.call(HANDLER_PREFIX + method, message, reply)


func _handler_for(method: String) -> Object:
	for handler in _handlers:
		if handler.has_method(HANDLER_PREFIX + method):
			return handler
	return null


func _reply(outcome: Dictionary, request_id: Variant, method: String) -> void:
	var message := {"id": request_id, "ok": bool(outcome.get("ok", false))}
	if message["ok"]:
		message["result"] = RpcProtocol.json_safe(outcome.get("result"))
	else:
		message["error"] = str(outcome.get("error", "%s failed" % method))
	_connection.send(message)


func _on_scene_changed(scene_root: Node) -> void:
	var path := scene_root.scene_file_path if scene_root != null else ""
	_connection.send({"type": "scene_changed", "path": path})


func _on_error_recorded(severity: String, message: String) -> void:
	_connection.send({"type": "play_error", "severity": severity, "message": message})
