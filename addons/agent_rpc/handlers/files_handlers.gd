@tool
extends RefCounted
## File methods: list project files, translate UIDs, find resources nothing refers to.

const RpcProtocol := preload("res://addons/agent_rpc/rpc_protocol.gd")
const RpcWorker := preload("res://addons/agent_rpc/rpc_worker.gd")

const DEFAULT_LIMIT := 500
const MAX_LIMIT := 5000
const MAX_LISTED := 200000
const SCAN_BUDGET_MS := 28000
const CANDIDATE_EXTENSIONS: Array[String] = ["tscn", "tres", "res", "gd", "gdshader"]
const TEXT_EXTENSIONS: Array[String] = [
	"tscn", "tres", "gd", "gdshader", "gdshaderinc", "cfg", "godot", "json", "cs", "import"
]
const UID_PATTERN := "uid=\"(uid://[0-9a-z]+)\""

var _worker: RpcWorker


func _init(context: Dictionary) -> void:
	_worker = context["worker"]


func rpc_list_project_files(request: Dictionary, reply: Callable) -> void:
	var root := str(request.get("root", "res://"))
	var kind := str(request.get("type", ""))
	var pattern := str(request.get("pattern", ""))
	var limit := clampi(int(request.get("limit", DEFAULT_LIMIT)), 1, MAX_LIMIT)
	var cursor := str(request.get("cursor", ""))
	var offset := 0
	if cursor != "":
		if not cursor.begins_with("#") or not cursor.substr(1).is_valid_int():
			reply.call(RpcProtocol.fail("cursor must look like #500 (nextCursor of a page)"))
			return
		offset = maxi(0, cursor.substr(1).to_int())
	var filesystem := EditorInterface.get_resource_filesystem()
	var folder := filesystem.get_filesystem_path(root)
	if folder == null:
		reply.call(RpcProtocol.fail("folder not found: %s" % root))
		return
	var files: Array[Dictionary] = []
	_collect(folder, kind, pattern, files)
	files.sort_custom(func(a: Dictionary, b: Dictionary) -> bool: return a["path"] < b["path"])
	var page := files.slice(offset, offset + limit)
	for entry in page:
		entry["uid"] = _uid_text(str(entry["path"]))
	var more := offset + limit < files.size()
	reply.call(
		RpcProtocol.ok(
			{
				"root": root,
				"total": files.size(),
				"files": page,
				"nextCursor": "#%d" % (offset + limit) if more else null,
				"truncated": more,
				"scanning": filesystem.is_scanning(),
			}
		)
	)


func rpc_resolve_uid(request: Dictionary, reply: Callable) -> void:
	var uid := str(request.get("uid", ""))
	var path := str(request.get("path", ""))
	if (uid == "") == (path == ""):
		reply.call(RpcProtocol.fail("give exactly one of uid or path"))
	elif uid != "":
		var id := ResourceUID.text_to_id(uid)
		var known := id != ResourceUID.INVALID_ID and ResourceUID.has_id(id)
		var found := ResourceUID.get_id_path(id) if known else ""
		reply.call(RpcProtocol.ok({"uid": uid, "path": found, "exists": known}))
	else:
		var exists := ResourceLoader.exists(path) or FileAccess.file_exists(path)
		reply.call(RpcProtocol.ok({"uid": _uid_text(path), "path": path, "exists": exists}))


func rpc_find_unused_resources(request: Dictionary, reply: Callable) -> void:
	var root := str(request.get("root", "res://"))
	var class_scripts := {}
	for entry in ProjectSettings.get_global_class_list():
		class_scripts[str(entry.get("path", ""))] = true
	var outcome: Dictionary = await _worker.run(_scan_unused.bind(root, class_scripts), SCAN_BUDGET_MS)
	if not outcome.get("done", false):
		reply.call(RpcProtocol.fail("the scan did not finish in 28 s; scan a smaller root"))
		return
	reply.call(RpcProtocol.ok(outcome["value"]))


func _collect(folder: EditorFileSystemDirectory, kind: String, pattern: String, out: Array) -> void:
	for index in folder.get_file_count():
		if out.size() >= MAX_LISTED:
			return
		var path := folder.get_file_path(index)
		var file_kind := RpcProtocol.kind_of(path)
		if kind != "" and file_kind != kind:
			continue
		if pattern != "" and not (path.match(pattern) or path.get_file().match(pattern)):
			continue
		out.append({"path": path, "type": file_kind})
	for index in folder.get_subdir_count():
		_collect(folder.get_subdir(index), kind, pattern, out)


func _uid_text(path: String) -> String:
	var id := ResourceLoader.get_resource_uid(path)
	return ResourceUID.id_to_text(id) if id != ResourceUID.INVALID_ID else ""


# Runs on a worker thread: only file access, no editor objects.
func _scan_unused(root: String, class_scripts: Dictionary) -> Dictionary:
	var all_files := PackedStringArray()
	_walk("res://", all_files)
	var corpus := PackedStringArray()
	for path in all_files:
		if TEXT_EXTENSIONS.has(path.get_extension().to_lower()):
			corpus.append(FileAccess.get_file_as_string(path))
	var text := "\n".join(corpus)
	var unused := PackedStringArray()
	var candidates := 0
	for path in all_files:
		var extension := path.get_extension().to_lower()
		var excluded := path.begins_with("res://addons/") or class_scripts.has(path)
		if not path.begins_with(root) or excluded or not CANDIDATE_EXTENSIONS.has(extension):
			continue
		candidates += 1
		if not _referenced(path, text):
			unused.append(path)
	return {"root": root, "unused": unused, "scanned": candidates}


func _referenced(path: String, text: String) -> bool:
	var own := ""
	if path.get_extension() in ["tscn", "tres", "gdshader", "gd"]:
		own = FileAccess.get_file_as_string(path)
	if text.count(path) > own.count(path):
		return true
	var uid := _uid_in_file(path, own)
	return uid != "" and text.count(uid) > own.count(uid)


func _uid_in_file(path: String, own: String) -> String:
	var sidecar := path + ".uid"
	if FileAccess.file_exists(sidecar):
		return FileAccess.get_file_as_string(sidecar).strip_edges()
	var pattern := RegEx.new()
	pattern.compile(UID_PATTERN)
	var found := pattern.search(own.get_slice("\n", 0))
	return found.get_string(1) if found != null else ""


func _walk(folder: String, out: PackedStringArray) -> void:
	if FileAccess.file_exists(folder.path_join(".gdignore")):
		return
	for file in DirAccess.get_files_at(folder):
		out.append(folder.path_join(file))
	for sub in DirAccess.get_directories_at(folder):
		if not sub.begins_with("."):
			_walk(folder.path_join(sub), out)
