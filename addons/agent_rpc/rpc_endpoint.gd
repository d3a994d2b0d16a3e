@tool
extends RefCounted
## Finds and reads the endpoint file the star-harness bridge publishes.
##
## Order: the AGENT_RPC_ENDPOINT environment variable, then the agent_rpc/endpoint_file
## project setting, then $STAR_HARNESS_HOME/godot/endpoint.json (~/.star-harness by default),
## which is where the bridge writes it, so both sides pair with no configuration.

const ENV_VAR := "AGENT_RPC_ENDPOINT"
const SETTING := "agent_rpc/endpoint_file"
const HOME_ENV := "STAR_HARNESS_HOME"
const DEFAULT_PORT := 8765
const LOOPBACK_HOSTS: Array[String] = ["127.0.0.1", "localhost"]
const TOKEN_PATTERN := "^[0-9a-fA-F]{32}$"


## The endpoint file path to watch.
static func resolve_path() -> String:
	var from_env := OS.get_environment(ENV_VAR).strip_edges()
	if from_env != "":
		return _expand(from_env)
	if ProjectSettings.has_setting(SETTING):
		var from_setting := str(ProjectSettings.get_setting(SETTING)).strip_edges()
		if from_setting != "":
			return _expand(from_setting)
	return default_path()


## The bridge's default endpoint file.
static func default_path() -> String:
	var home := OS.get_environment(HOME_ENV).strip_edges()
	if home == "":
		home = _user_home().path_join(".star-harness")
	else:
		home = _expand(home)
	return home.path_join("godot").path_join("endpoint.json")


## {"ok": true, "endpoint": {host, port, token}} or {"ok": false, "error": why}.
static func read(path: String) -> Dictionary:
	if not FileAccess.file_exists(path):
		return {"ok": false, "error": "no endpoint file at %s yet (start the agent)" % path}
	var data: Variant = JSON.parse_string(FileAccess.get_file_as_string(path))
	if typeof(data) != TYPE_DICTIONARY:
		return {"ok": false, "error": "the endpoint file %s is not a JSON object" % path}
	var host := str(data.get("host", "127.0.0.1"))
	if not LOOPBACK_HOSTS.has(host):
		return {"ok": false, "error": "refusing non-loopback host %s in %s" % [host, path]}
	var token := str(data.get("token", ""))
	var pattern := RegEx.new()
	pattern.compile(TOKEN_PATTERN)
	if pattern.search(token) == null:
		return {"ok": false, "error": "the token in %s is not 32 hex characters" % path}
	return {"ok": true, "endpoint": {"host": host, "port": _port(data.get("port")), "token": token}}


static func _port(value: Variant) -> int:
	if typeof(value) != TYPE_INT and typeof(value) != TYPE_FLOAT:
		return DEFAULT_PORT
	var port := int(value)
	if port < 1 or port > 65535:
		return DEFAULT_PORT
	return port


static func _user_home() -> String:
	var home := OS.get_environment("HOME")
	if home == "":
		home = OS.get_environment("USERPROFILE")
	return home


static func _expand(path: String) -> String:
	if path.begins_with("~"):
		return _user_home() + path.substr(1)
	if path.begins_with("res://") or path.begins_with("user://"):
		return ProjectSettings.globalize_path(path)
	return path
