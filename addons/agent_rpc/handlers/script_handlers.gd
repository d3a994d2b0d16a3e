@tool
extends RefCounted
## Script methods: lint GDScript, inspect a script, list and check class_name classes.

const RpcProtocol := preload("res://addons/agent_rpc/rpc_protocol.gd")
const RpcWorker := preload("res://addons/agent_rpc/rpc_worker.gd")

## Each check runs `godot --headless --check-only`; all of them share this budget.
const LINT_BUDGET_MS := 28000
const SCAN_BUDGET_MS := 28000
const CLASS_NAME_PATTERN := "(?m)^\\s*class_name\\s+([A-Za-z_][A-Za-z0-9_]*)"
const LOCATION_PATTERN := "\\((res://[^)]*?):(\\d+)\\)"
const NOT_DECLARED_PATTERN := "Identifier \"([A-Za-z_][A-Za-z0-9_]*)\" not declared"

var _worker: RpcWorker


func _init(context: Dictionary) -> void:
	_worker = context["worker"]


func rpc_lint_scripts(request: Dictionary, reply: Callable) -> void:
	var paths := RpcProtocol.strings(request.get("paths", []))
	if paths.is_empty():
		reply.call(RpcProtocol.fail("paths required"))
		return
	var program := OS.get_executable_path()
	var project := ProjectSettings.globalize_path("res://")
	var outcome: Dictionary = await _worker.run(
		_check_all.bind(program, project, paths), LINT_BUDGET_MS
	)
	if not outcome.get("done", false):
		reply.call(RpcProtocol.fail("linting did not finish in 28 s; lint fewer files at once"))
		return
	var autoloads := _autoload_names()
	var files := []
	for checked in outcome["value"]:
		files.append(_report(checked, autoloads))
	reply.call(RpcProtocol.ok({"files": files}))


func rpc_inspect_script(request: Dictionary, reply: Callable) -> void:
	var path := str(request.get("path", ""))
	if path == "" or not ResourceLoader.exists(path):
		reply.call(RpcProtocol.fail("script not found: %s" % path))
		return
	var loaded: Resource = await _worker.load_resource(path)
	var script := loaded as Script
	if script == null:
		reply.call(
			RpcProtocol.fail("%s is not a loadable script; check it with lint_scripts" % path)
		)
		return
	var base_script := script.get_base_script()
	var base_type := str(script.get_instance_base_type())
	reply.call(
		RpcProtocol.ok(
			{
				"path": path,
				"base": base_type,
				"extends": base_script.resource_path if base_script != null else base_type,
				"className": str(script.get_global_name()),
				"signals": _members(script.get_script_signal_list(), false),
				"methods": _members(script.get_script_method_list(), false),
				"properties": _members(script.get_script_property_list(), true),
				"constants": _constants(script.get_script_constant_map()),
			}
		)
	)


func rpc_list_global_classes(_request: Dictionary, reply: Callable) -> void:
	var classes := []
	for entry in ProjectSettings.get_global_class_list():
		classes.append(
			{
				"class": str(entry.get("class", "")),
				"base": str(entry.get("base", "")),
				"language": str(entry.get("language", "")),
				"path": str(entry.get("path", "")),
				"icon": str(entry.get("icon", "")),
			}
		)
	reply.call(RpcProtocol.ok({"classes": classes, "count": classes.size()}))


func rpc_find_class_name_conflicts(request: Dictionary, reply: Callable) -> void:
	var include_addons := bool(request.get("include_addons", false))
	var outcome: Dictionary = await _worker.run(
		_declared_class_names.bind(include_addons), SCAN_BUDGET_MS
	)
	if not outcome.get("done", false):
		reply.call(RpcProtocol.fail("the scan did not finish in 28 s"))
		return
	var declared: Dictionary = outcome["value"]
	var conflicts := []
	for class_id in declared:
		var files: PackedStringArray = declared[class_id]
		var engine_class := ClassDB.class_exists(class_id)
		if files.size() > 1 or engine_class:
			conflicts.append({"className": class_id, "paths": files, "engineClass": engine_class})
	reply.call(RpcProtocol.ok({"conflicts": conflicts, "count": conflicts.size()}))


# Runs on a worker thread.
func _check_all(program: String, project: String, paths: PackedStringArray) -> Array:
	var results := []
	for path in paths:
		if not FileAccess.file_exists(path):
			results.append({"path": path, "missing": true})
			continue
		var arguments := PackedStringArray(
			["--headless", "--path", project, "--check-only", "--script", path]
		)
		var run := _worker.execute(program, arguments)
		run["path"] = path
		results.append(run)
	return results


func _report(checked: Dictionary, autoloads: Dictionary) -> Dictionary:
	var path := str(checked["path"])
	if checked.get("missing", false):
		return {"path": path, "ok": false, "issues": [_issue(0, "file not found", "error")]}
	var issues := []
	var lines := str(checked.get("output", "")).split("\n")
	var location := RegEx.new()
	location.compile(LOCATION_PATTERN)
	for index in lines.size():
		var severity := _severity(lines[index])
		if severity == "":
			continue
		var parts := lines[index].strip_edges().split(":", true, 1)
		var message := parts[1].strip_edges() if parts.size() > 1 else parts[0]
		if _autoload_false_positive(message, autoloads) or message.begins_with("Failed to load"):
			continue
		var line_number := 0
		if index + 1 < lines.size():
			var found := location.search(lines[index + 1])
			if found != null:
				line_number = found.get_string(2).to_int()
		issues.append(_issue(line_number, message, severity))
	var failed := false
	for issue in issues:
		failed = failed or issue["severity"] == "error"
	return {"path": path, "ok": not failed, "issues": issues}


func _severity(line: String) -> String:
	var text := line.strip_edges().to_upper()
	for prefix in ["SCRIPT ERROR", "ERROR", "PARSE ERROR"]:
		if text.begins_with(prefix):
			return "error"
	if text.begins_with("SCRIPT WARNING") or text.begins_with("WARNING"):
		return "warning"
	return ""


func _issue(line: int, message: String, severity: String) -> Dictionary:
	return {"line": line, "column": 0, "message": message, "severity": severity}


# A script checked on its own cannot see autoload singletons; those errors are not real.
func _autoload_false_positive(message: String, autoloads: Dictionary) -> bool:
	var pattern := RegEx.new()
	pattern.compile(NOT_DECLARED_PATTERN)
	var found := pattern.search(message)
	return found != null and autoloads.has(found.get_string(1))


func _autoload_names() -> Dictionary:
	var names := {}
	for property in ProjectSettings.get_property_list():
		var key := str(property.get("name", ""))
		if key.begins_with("autoload/"):
			names[key.trim_prefix("autoload/")] = true
	return names


func _members(entries: Array, variables_only: bool) -> Array:
	var members := []
	for entry in entries:
		var usage := int(entry.get("usage", 0))
		if variables_only and (usage & PROPERTY_USAGE_SCRIPT_VARIABLE) == 0:
			continue
		var member := {"name": str(entry.get("name", ""))}
		if entry.has("type"):
			member["type"] = type_string(int(entry["type"]))
		if entry.has("hint"):
			member["hint"] = RpcProtocol.hint_name(int(entry["hint"]))
			member["hintString"] = str(entry.get("hint_string", ""))
		if entry.has("args"):
			var names := PackedStringArray()
			for argument in entry["args"]:
				names.append(str(argument.get("name", "")))
			member["args"] = names
		members.append(member)
	return members


func _constants(constants: Dictionary) -> Array:
	var out := []
	for name in constants:
		out.append({"name": str(name), "value": RpcProtocol.describe(constants[name])})
	return out


# Runs on a worker thread.
func _declared_class_names(include_addons: bool) -> Dictionary:
	var scripts := PackedStringArray()
	_walk_scripts("res://", include_addons, scripts)
	var pattern := RegEx.new()
	pattern.compile(CLASS_NAME_PATTERN)
	var declared := {}
	for path in scripts:
		var found := pattern.search(FileAccess.get_file_as_string(path))
		if found == null:
			continue
		var class_id := found.get_string(1)
		if not declared.has(class_id):
			declared[class_id] = PackedStringArray()
		var files: PackedStringArray = declared[class_id]
		files.append(path)
		declared[class_id] = files
	return declared


func _walk_scripts(folder: String, include_addons: bool, out: PackedStringArray) -> void:
	if FileAccess.file_exists(folder.path_join(".gdignore")):
		return
	if folder == "res://addons" and not include_addons:
		return
	for file in DirAccess.get_files_at(folder):
		if file.get_extension() == "gd":
			out.append(folder.path_join(file))
	for sub in DirAccess.get_directories_at(folder):
		if not sub.begins_with("."):
			_walk_scripts(folder.path_join(sub), include_addons, out)
