@tool
extends RefCounted
## Project methods: read and write settings, re-import files and wait for imports.

const RpcProtocol := preload("res://addons/agent_rpc/rpc_protocol.gd")

const DEFAULT_IMPORT_WAIT_MS := 30000
const MAX_IMPORT_WAIT_MS := 60000
const IMPORT_POLL_SECONDS := 0.1
## Files Godot loads as they are; they never get an .import sidecar.
const NATIVE_EXTENSIONS: Array[String] = [
	"tscn", "scn", "tres", "res", "gd", "cs", "gdshader", "gdshaderinc", "json", "cfg", "txt"
]

var _tree: SceneTree


func _init(context: Dictionary) -> void:
	_tree = context["tree"]


func rpc_get_project_setting(request: Dictionary, reply: Callable) -> void:
	var key := str(request.get("key", "")).strip_edges()
	if key == "":
		reply.call(RpcProtocol.fail("key required"))
		return
	var exists := ProjectSettings.has_setting(key)
	var value: Variant = ProjectSettings.get_setting(key) if exists else null
	reply.call(
		RpcProtocol.ok({"key": key, "exists": exists, "value": RpcProtocol.json_safe(value)})
	)


func rpc_set_project_setting(request: Dictionary, reply: Callable) -> void:
	var key := str(request.get("key", "")).strip_edges()
	var rule := RpcProtocol.denied_rule(key)
	if key == "":
		reply.call(RpcProtocol.fail("key required"))
	elif rule != "":
		reply.call(RpcProtocol.fail("project setting %s is protected (%s)" % [key, rule]))
	elif request.get("value") == null:
		reply.call(RpcProtocol.fail("value required (null is not allowed)"))
	else:
		reply.call(_write_setting(key, request["value"]))


func rpc_import_resources(request: Dictionary, reply: Callable) -> void:
	var paths := RpcProtocol.strings(request.get("paths", []))
	var filesystem := EditorInterface.get_resource_filesystem()
	if paths.is_empty():
		filesystem.scan()
		reply.call(RpcProtocol.ok({"scanned": true, "reimported": [], "missing": []}))
		return
	var existing := PackedStringArray()
	var missing := PackedStringArray()
	for path in paths:
		if FileAccess.file_exists(path):
			existing.append(path)
			filesystem.update_file(path)
		else:
			missing.append(path)
	if not existing.is_empty():
		filesystem.reimport_files(existing)
	reply.call(RpcProtocol.ok({"scanned": false, "reimported": existing, "missing": missing}))


func rpc_wait_for_import_done(request: Dictionary, reply: Callable) -> void:
	var paths := RpcProtocol.strings(request.get("paths", []))
	if paths.is_empty():
		reply.call(RpcProtocol.fail("paths required"))
		return
	var timeout_value: Variant = request.get("timeout_ms", DEFAULT_IMPORT_WAIT_MS)
	var timeout_ms := DEFAULT_IMPORT_WAIT_MS
	if typeof(timeout_value) == TYPE_INT or typeof(timeout_value) == TYPE_FLOAT:
		timeout_ms = clampi(int(timeout_value), 0, MAX_IMPORT_WAIT_MS)
	var started := Time.get_ticks_msec()
	var remaining := _not_imported(paths)
	while not remaining.is_empty() and Time.get_ticks_msec() - started < timeout_ms:
		await _tree.create_timer(IMPORT_POLL_SECONDS).timeout
		remaining = _not_imported(paths)
	reply.call(
		RpcProtocol.ok(
			{
				"ok": remaining.is_empty(),
				"remaining": remaining,
				"elapsedMs": Time.get_ticks_msec() - started,
			}
		)
	)


func _write_setting(key: String, raw: Variant) -> Dictionary:
	var existed := ProjectSettings.has_setting(key)
	var previous: Variant = ProjectSettings.get_setting(key) if existed else null
	var value: Variant = raw
	# JSON numbers arrive as floats; keep whole numbers integers unless the setting is a float.
	if typeof(raw) == TYPE_FLOAT and is_equal_approx(raw, roundf(raw)):
		if typeof(previous) != TYPE_FLOAT:
			value = int(raw)
	ProjectSettings.set_setting(key, value)
	var error := ProjectSettings.save()
	if error != OK:
		return RpcProtocol.fail("could not save project.godot: %s" % error_string(error))
	return RpcProtocol.ok(
		{
			"key": key,
			"value": RpcProtocol.json_safe(value),
			"previous": RpcProtocol.json_safe(previous),
			"saved": true,
		}
	)


func _not_imported(paths: PackedStringArray) -> PackedStringArray:
	var filesystem := EditorInterface.get_resource_filesystem()
	if filesystem.is_scanning():
		return paths.duplicate()
	var waiting := PackedStringArray()
	for path in paths:
		var native := NATIVE_EXTENSIONS.has(path.get_extension().to_lower())
		if not FileAccess.file_exists(path):
			waiting.append(path)
		elif not native and not FileAccess.file_exists(path + ".import"):
			waiting.append(path)
		elif not ResourceLoader.exists(path):
			waiting.append(path)
	return waiting
