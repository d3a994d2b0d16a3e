@tool
extends RefCounted
## Export methods: presets, installed templates, and exporting in a headless subprocess.

const RpcProtocol := preload("res://addons/agent_rpc/rpc_protocol.gd")
const RpcWorker := preload("res://addons/agent_rpc/rpc_worker.gd")

const PRESETS_FILE := "res://export_presets.cfg"
const EXPORT_TIMEOUT_MS := 300000
const LOG_TAIL_LINES := 40
## Release template file names per preset platform (debug ones sit next to them).
const TEMPLATE_FILES := {
	"Linux": "linux_release.x86_64",
	"Linux/X11": "linux_release.x86_64",
	"Windows Desktop": "windows_release_x86_64.exe",
	"macOS": "macos.zip",
	"Web": "web_release.zip",
	"Android": "android_release.apk",
	"iOS": "ios.zip",
}
const EXTENSIONS := {
	"Linux": ".x86_64",
	"Linux/X11": ".x86_64",
	"Windows Desktop": ".exe",
	"macOS": ".zip",
	"Web": ".html",
	"Android": ".apk",
	"iOS": ".ipa",
}

var _worker: RpcWorker
var _exporting := false


func _init(context: Dictionary) -> void:
	_worker = context["worker"]


func rpc_list_export_presets(_request: Dictionary, reply: Callable) -> void:
	var presets := _presets()
	var result := {"presets": presets, "count": presets.size()}
	if not FileAccess.file_exists(PRESETS_FILE):
		result["missing"] = true
	reply.call(RpcProtocol.ok(result))


func rpc_check_export_templates(_request: Dictionary, reply: Callable) -> void:
	var version := _template_version()
	var folder := EditorInterface.get_editor_paths().get_data_dir()
	folder = folder.path_join("export_templates").path_join(version)
	var installed := DirAccess.dir_exists_absolute(folder)
	var files := DirAccess.get_files_at(folder) if installed else PackedStringArray()
	var missing := PackedStringArray()
	for preset in _presets():
		var platform := str(preset["platform"])
		var needed := str(TEMPLATE_FILES.get(platform, ""))
		if needed != "" and not files.has(needed) and not missing.has(platform):
			missing.append(platform)
	var stamp := folder.path_join("version.txt")
	reply.call(
		RpcProtocol.ok(
			{
				"installed": installed,
				"version": version,
				"templateVersion": _read_text(stamp).strip_edges(),
				"templateDir": folder,
				"templateFiles": files,
				"missingPlatforms": missing,
			}
		)
	)


func rpc_export_project(request: Dictionary, reply: Callable) -> void:
	var preset_name := str(request.get("preset", "")).strip_edges()
	var output_dir := str(request.get("output_dir", ""))
	var preset := _find_preset(preset_name)
	if _exporting:
		reply.call(RpcProtocol.fail("export already in progress"))
	elif not output_dir.begins_with("res://"):
		reply.call(RpcProtocol.fail("output_dir must be a res:// folder"))
	elif preset.is_empty():
		reply.call(RpcProtocol.fail(_unknown_preset(preset_name)))
	else:
		_exporting = true
		reply.call(await _export(preset, output_dir, bool(request.get("debug", false))))
		_exporting = false


func _export(preset: Dictionary, output_dir: String, debug: bool) -> Dictionary:
	var folder := ProjectSettings.globalize_path(output_dir)
	DirAccess.make_dir_recursive_absolute(folder)
	var file_name := str(preset["exportPath"]).get_file()
	if file_name == "":
		var platform := str(preset["platform"])
		file_name = str(preset["name"]).validate_filename() + str(EXTENSIONS.get(platform, ""))
	var output_path := folder.path_join(file_name)
	var arguments := PackedStringArray(
		[
			"--headless",
			"--path",
			ProjectSettings.globalize_path("res://"),
			"--export-debug" if debug else "--export-release",
			str(preset["name"]),
			output_path,
		]
	)
	var job := _worker.execute.bind(OS.get_executable_path(), arguments)
	var outcome: Dictionary = await _worker.run(job, EXPORT_TIMEOUT_MS)
	if not outcome.get("done", false):
		return RpcProtocol.ok(
			{
				"ok": false,
				"timedOut": outcome.get("timedOut", false),
				"outputPath": output_path,
				"errors": ["the export did not finish within 300 s"],
				"logTail": [],
			}
		)
	var run: Dictionary = outcome["value"]
	var lines := str(run["output"]).split("\n", false)
	var errors := PackedStringArray()
	for line in lines:
		if line.strip_edges().to_upper().begins_with("ERROR"):
			errors.append(line.strip_edges())
	var succeeded := int(run["exitCode"]) == 0 and FileAccess.file_exists(output_path)
	return RpcProtocol.ok(
		{
			"ok": succeeded,
			"timedOut": false,
			"exitCode": run["exitCode"],
			"outputPath": output_path,
			"errors": errors,
			"logTail": lines.slice(maxi(0, lines.size() - LOG_TAIL_LINES)),
		}
	)


func _presets() -> Array[Dictionary]:
	var presets: Array[Dictionary] = []
	var config := ConfigFile.new()
	if config.load(PRESETS_FILE) != OK:
		return presets
	for section in config.get_sections():
		var parts := section.split(".")
		if parts.size() != 2 or parts[0] != "preset" or not parts[1].is_valid_int():
			continue
		presets.append(
			{
				"index": parts[1].to_int(),
				"name": str(config.get_value(section, "name", "")),
				"platform": str(config.get_value(section, "platform", "")),
				"exportPath": str(config.get_value(section, "export_path", "")),
				"runnable": bool(config.get_value(section, "runnable", false)),
			}
		)
	return presets


func _find_preset(preset_name: String) -> Dictionary:
	for preset in _presets():
		if str(preset["name"]) == preset_name:
			return preset
	return {}


func _unknown_preset(preset_name: String) -> String:
	var names := PackedStringArray()
	for preset in _presets():
		names.append(str(preset["name"]))
	if names.is_empty():
		return "no export presets: add one in Project > Export (export_presets.cfg)"
	return "unknown export preset %s; available: %s" % [preset_name, ", ".join(names)]


func _template_version() -> String:
	var info := Engine.get_version_info()
	var version := "%d.%d" % [int(info["major"]), int(info["minor"])]
	if int(info["patch"]) > 0:
		version += ".%d" % int(info["patch"])
	version += ".%s" % str(info["status"])
	if ClassDB.class_exists("CSharpScript"):
		version += ".mono"
	return version


func _read_text(path: String) -> String:
	return FileAccess.get_file_as_string(path) if FileAccess.file_exists(path) else ""
