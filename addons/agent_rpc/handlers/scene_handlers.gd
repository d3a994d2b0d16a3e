@tool
extends RefCounted
## Scene methods: editor info, open and edited scenes, scene trees and node properties.

const RpcProtocol := preload("res://addons/agent_rpc/rpc_protocol.gd")
const RpcWorker := preload("res://addons/agent_rpc/rpc_worker.gd")

const NODE_BUDGET := 5000
const DEFAULT_DEPTH := 8
const MAX_DEPTH := 16
const MAX_PROPERTIES := 500

var _worker: RpcWorker


func _init(context: Dictionary) -> void:
	_worker = context["worker"]


func rpc_get_editor_info(_request: Dictionary, reply: Callable) -> void:
	reply.call(
		RpcProtocol.ok(
			{
				"godotVersion": str(Engine.get_version_info().get("string", "")),
				"projectPath": ProjectSettings.globalize_path("res://"),
				"editedScene": _edited_path(),
				"playing": EditorInterface.is_playing_scene(),
			}
		)
	)


func rpc_get_open_scenes(_request: Dictionary, reply: Callable) -> void:
	var scenes := PackedStringArray()
	for path in EditorInterface.get_open_scenes():
		if str(path) != "":
			scenes.append(str(path))
	reply.call(RpcProtocol.ok({"scenes": scenes}))


func rpc_get_edited_scene(_request: Dictionary, reply: Callable) -> void:
	reply.call(
		RpcProtocol.ok(
			{
				"path": _edited_path(),
				"playing": EditorInterface.is_playing_scene(),
				"playingScene": EditorInterface.get_playing_scene(),
			}
		)
	)


func rpc_open_scene(request: Dictionary, reply: Callable) -> void:
	var path := str(request.get("path", ""))
	if path == "":
		reply.call(RpcProtocol.fail("path required"))
	elif not ResourceLoader.exists(path):
		reply.call(RpcProtocol.fail("scene not found: %s" % path))
	else:
		EditorInterface.open_scene_from_path(path)
		reply.call(RpcProtocol.ok({"opened": path}))


func rpc_reload_scene(request: Dictionary, reply: Callable) -> void:
	var path := str(request.get("path", ""))
	if path == "":
		reply.call(RpcProtocol.fail("path required"))
		return
	if not ResourceLoader.exists(path):
		reply.call(RpcProtocol.fail("scene not found: %s" % path))
		return
	if not EditorInterface.get_open_scenes().has(path):
		EditorInterface.open_scene_from_path(path)
	EditorInterface.reload_scene_from_path(path)
	reply.call(RpcProtocol.ok({"reloaded": path}))


func rpc_get_scene_tree(request: Dictionary, reply: Callable) -> void:
	var path := str(request.get("path", ""))
	var depth := clampi(int(request.get("max_depth", DEFAULT_DEPTH)), 1, MAX_DEPTH)
	var budget := {"left": NODE_BUDGET, "truncated": false}
	var root := EditorInterface.get_edited_scene_root()
	var result := {"maxDepth": depth}
	if path == "" or (root != null and root.scene_file_path == path):
		if root == null:
			reply.call(RpcProtocol.fail("no edited scene; open one or pass path"))
			return
		result["path"] = root.scene_file_path
		result["source"] = "edited_scene"
		result["tree"] = _live_node(root, root, depth, 0, budget)
	else:
		var loaded: Resource = await _worker.load_resource(path)
		var packed := loaded as PackedScene
		if packed == null:
			reply.call(RpcProtocol.fail("cannot load scene %s (missing or broken)" % path))
			return
		result["path"] = path
		result["source"] = "scene_file"
		result["tree"] = _state_tree(packed.get_state(), depth, budget)
	result["nodeCount"] = NODE_BUDGET - int(budget["left"])
	result["truncated"] = budget["truncated"]
	reply.call(RpcProtocol.ok(result))


func rpc_get_node_properties(request: Dictionary, reply: Callable) -> void:
	var node_path := str(request.get("node_path", ""))
	var path := str(request.get("path", ""))
	if node_path == "":
		reply.call(RpcProtocol.fail("node_path required ('.' is the scene root)"))
		return
	var root := EditorInterface.get_edited_scene_root()
	if path == "" or (root != null and root.scene_file_path == path):
		reply.call(_edited_node_properties(root, node_path))
		return
	var loaded: Resource = await _worker.load_resource(path)
	var packed := loaded as PackedScene
	if packed == null:
		reply.call(RpcProtocol.fail("cannot load scene %s (missing or broken)" % path))
		return
	reply.call(_stored_node_properties(packed.get_state(), path, node_path))


func _edited_path() -> String:
	var root := EditorInterface.get_edited_scene_root()
	return root.scene_file_path if root != null else ""


func _live_node(
	node: Node, scene_root: Node, depth: int, level: int, budget: Dictionary
) -> Dictionary:
	budget["left"] = int(budget["left"]) - 1
	var script: Script = node.get_script()
	var entry := {
		"name": str(node.name),
		"type": node.get_class(),
		"script": script.resource_path if script != null else "",
		"children": [],
	}
	var owned: Array[Node] = []
	for child in node.get_children():
		# Like the Scene dock: only nodes this scene owns, not the insides of instances.
		if child.owner == scene_root:
			owned.append(child)
	if level >= depth:
		if not owned.is_empty():
			entry["childCount"] = owned.size()
		return entry
	for child in owned:
		if int(budget["left"]) <= 0:
			budget["truncated"] = true
			break
		entry["children"].append(_live_node(child, scene_root, depth, level + 1, budget))
	return entry


func _state_tree(state: SceneState, depth: int, budget: Dictionary) -> Dictionary:
	var by_path := {}
	var root := {}
	for index in state.get_node_count():
		var node_path := _plain_path(state.get_node_path(index))
		var level := 0 if node_path == "." else node_path.count("/") + 1
		if level > depth:
			continue
		if int(budget["left"]) <= 0:
			budget["truncated"] = true
			break
		budget["left"] = int(budget["left"]) - 1
		var entry := {
			"name": str(state.get_node_name(index)),
			"type": _state_type(state, index),
			"script": _state_script(state, index),
			"children": [],
		}
		by_path[node_path] = entry
		if index == 0:
			root = entry
			continue
		var parent: Dictionary = by_path.get(_plain_path(state.get_node_path(index, true)), root)
		parent["children"].append(entry)
	return root


func _plain_path(path: NodePath) -> String:
	var text := str(path)
	if text.begins_with("./"):
		text = text.substr(2)
	return "." if text == "" else text


func _state_type(state: SceneState, index: int) -> String:
	var type := str(state.get_node_type(index))
	if type != "":
		return type
	var instance := state.get_node_instance(index)
	return "instance:%s" % instance.resource_path if instance != null else ""


func _state_script(state: SceneState, index: int) -> String:
	for property in state.get_node_property_count(index):
		if str(state.get_node_property_name(index, property)) == "script":
			var value: Variant = state.get_node_property_value(index, property)
			if value is Script:
				return str(value.resource_path)
	return ""


func _edited_node_properties(root: Node, node_path: String) -> Dictionary:
	if root == null:
		return RpcProtocol.fail("no edited scene; open one or pass path")
	var node := root if node_path == "." else root.get_node_or_null(NodePath(node_path))
	if node == null:
		return RpcProtocol.fail("node not found: %s" % node_path)
	var properties := []
	var wanted := PROPERTY_USAGE_SCRIPT_VARIABLE | PROPERTY_USAGE_STORAGE
	for info in node.get_property_list():
		var usage := int(info.get("usage", 0))
		if (usage & wanted) == 0 or properties.size() >= MAX_PROPERTIES:
			continue
		var property_name := str(info.get("name", ""))
		properties.append(
			{
				"name": property_name,
				"type": type_string(int(info.get("type", TYPE_NIL))),
				"value": RpcProtocol.json_safe(node.get(property_name)),
				"hint": RpcProtocol.hint_name(int(info.get("hint", PROPERTY_HINT_NONE))),
				"hintString": str(info.get("hint_string", "")),
				"script": (usage & PROPERTY_USAGE_SCRIPT_VARIABLE) != 0,
			}
		)
	return RpcProtocol.ok(
		{
			"path": root.scene_file_path,
			"nodePath": node_path,
			"source": "edited_scene",
			"type": node.get_class(),
			"properties": properties,
		}
	)


func _stored_node_properties(state: SceneState, path: String, node_path: String) -> Dictionary:
	var wanted := _plain_path(NodePath(node_path))
	for index in state.get_node_count():
		if _plain_path(state.get_node_path(index)) != wanted:
			continue
		var properties := []
		for property in state.get_node_property_count(index):
			var value: Variant = state.get_node_property_value(index, property)
			properties.append(
				{
					"name": str(state.get_node_property_name(index, property)),
					"type": type_string(typeof(value)),
					"value": RpcProtocol.json_safe(value),
				}
			)
		return RpcProtocol.ok(
			{
				"path": path,
				"nodePath": node_path,
				"source": "scene_file",
				"type": _state_type(state, index),
				"properties": properties,
			}
		)
	return RpcProtocol.fail("node not found in %s: %s" % [path, node_path])
