@tool
extends RefCounted
## Wire constants shared by every part of the addon, and small helpers for replies.

const ADDON_VERSION := "0.7.0"

## The 27 editor methods and ping; anything else is answered with "unknown method".
const ALLOWED_METHODS: Array[String] = [
	"ping",
	"get_editor_info",
	"get_open_scenes",
	"get_edited_scene",
	"open_scene",
	"reload_scene",
	"get_scene_tree",
	"get_node_properties",
	"run_current_scene",
	"play_main_scene",
	"import_resources",
	"get_play_errors",
	"stop_scene",
	"get_debugger_state",
	"set_breakpoint",
	"find_unused_resources",
	"export_project",
	"get_project_setting",
	"set_project_setting",
	"lint_scripts",
	"list_project_files",
	"resolve_uid",
	"wait_for_import_done",
	"list_global_classes",
	"find_class_name_conflicts",
	"inspect_script",
	"list_export_presets",
	"check_export_templates",
]

## The bridge refuses these too; the addon checks again so no other client can write them.
const DENIED_PREFIXES: Array[String] = [
	"autoload/",
	"input/",
	"debug/file_logging/",
	"debug/settings/stdout/verbose_stdout",
	"debug/settings/stdout/print_fps",
	"debug/gdscript/warnings/",
	"debug/shapes/",
	"debug/colors/",
	"network/tls/certificate_bundle_override",
	"project_settings_override/",
	"editor_plugins/enabled",
]

const FILE_KINDS := {
	"tscn": "scene",
	"scn": "scene",
	"gd": "script",
	"cs": "script",
	"gdshader": "shader",
	"gdshaderinc": "shader",
	"tres": "resource",
	"res": "resource",
	"png": "texture",
	"jpg": "texture",
	"jpeg": "texture",
	"webp": "texture",
	"svg": "texture",
	"bmp": "texture",
	"tga": "texture",
	"exr": "texture",
	"hdr": "texture",
	"ktx": "texture",
	"dds": "texture",
	"wav": "audio",
	"ogg": "audio",
	"mp3": "audio",
}

const HINT_NAMES := {
	PROPERTY_HINT_NONE: "none",
	PROPERTY_HINT_RANGE: "range",
	PROPERTY_HINT_ENUM: "enum",
	PROPERTY_HINT_ENUM_SUGGESTION: "enum_suggestion",
	PROPERTY_HINT_EXP_EASING: "exp_easing",
	PROPERTY_HINT_LINK: "link",
	PROPERTY_HINT_FLAGS: "flags",
	PROPERTY_HINT_LAYERS_2D_RENDER: "layers_2d_render",
	PROPERTY_HINT_LAYERS_2D_PHYSICS: "layers_2d_physics",
	PROPERTY_HINT_LAYERS_3D_RENDER: "layers_3d_render",
	PROPERTY_HINT_LAYERS_3D_PHYSICS: "layers_3d_physics",
	PROPERTY_HINT_FILE: "file",
	PROPERTY_HINT_DIR: "dir",
	PROPERTY_HINT_GLOBAL_FILE: "global_file",
	PROPERTY_HINT_GLOBAL_DIR: "global_dir",
	PROPERTY_HINT_RESOURCE_TYPE: "resource_type",
	PROPERTY_HINT_MULTILINE_TEXT: "multiline_text",
	PROPERTY_HINT_PLACEHOLDER_TEXT: "placeholder_text",
	PROPERTY_HINT_COLOR_NO_ALPHA: "color_no_alpha",
	PROPERTY_HINT_NODE_PATH_VALID_TYPES: "node_path_valid_types",
	PROPERTY_HINT_NODE_TYPE: "node_type",
	PROPERTY_HINT_ARRAY_TYPE: "array_type",
}

const MAX_JSON_DEPTH := 32


## A successful reply for the dispatcher.
static func ok(result: Variant) -> Dictionary:
	return {"ok": true, "result": result}


## A refusal; the message reaches the agent verbatim, so it should say what to do.
static func fail(message: String) -> Dictionary:
	return {"ok": false, "error": message}


## The deny rule that protects a setting key, or "" when the key may be written.
static func denied_rule(key: String) -> String:
	var folded := key.to_lower()
	for prefix in DENIED_PREFIXES:
		if folded.begins_with(prefix) or folded == prefix.trim_suffix("/"):
			return prefix
	return ""


## The kind of a project file as list_project_files reports it.
static func kind_of(path: String) -> String:
	return str(FILE_KINDS.get(path.get_extension().to_lower(), "other"))


## Strings from a JSON array parameter (anything else is dropped).
static func strings(value: Variant) -> PackedStringArray:
	var out := PackedStringArray()
	if typeof(value) == TYPE_ARRAY:
		for item in value:
			if typeof(item) == TYPE_STRING and str(item) != "":
				out.append(str(item))
	return out


## The name of a property hint.
static func hint_name(hint: int) -> String:
	return str(HINT_NAMES.get(hint, "hint_%d" % hint))


## A Variant turned into something JSON can carry; engine types become their text form.
static func json_safe(value: Variant, depth: int = 0) -> Variant:
	var kind := typeof(value)
	var out: Variant = null
	if depth > MAX_JSON_DEPTH:
		out = str(value)
	elif kind in [TYPE_NIL, TYPE_BOOL, TYPE_INT, TYPE_STRING]:
		out = value
	elif kind == TYPE_FLOAT:
		out = value if is_finite(value) else str(value)
	elif kind in [TYPE_STRING_NAME, TYPE_NODE_PATH]:
		out = str(value)
	elif kind == TYPE_DICTIONARY:
		var mapped := {}
		for key in value:
			mapped[str(key)] = json_safe(value[key], depth + 1)
		out = mapped
	elif kind == TYPE_ARRAY or kind >= TYPE_PACKED_BYTE_ARRAY:
		var items := []
		for item in value:
			items.append(json_safe(item, depth + 1))
		out = items
	else:
		out = describe(value)
	return out


## A short text form of any value (resources by path, objects by class).
static func describe(value: Variant) -> String:
	if typeof(value) == TYPE_OBJECT:
		if value == null:
			return "null"
		if value is Resource and str(value.resource_path) != "":
			return str(value.resource_path)
		return "<%s>" % value.get_class()
	return var_to_str(value)
