@tool
extends EditorPlugin
## Registers the StarHarness autoload and its project settings when the plugin is enabled.

const AUTOLOAD_NAME := "StarHarness"
const AUTOLOAD_PATH := "res://addons/star_harness_client/star_harness.gd"
const StarHarnessClient := preload("res://addons/star_harness_client/star_harness.gd")


func _enable_plugin() -> void:
	_add_setting(StarHarnessClient.SETTING_URL, StarHarnessClient.DEFAULT_URL)
	_add_setting(StarHarnessClient.SETTING_PLAYER_ID, StarHarnessClient.DEFAULT_PLAYER_ID)
	_add_setting(StarHarnessClient.SETTING_AUTO_CONNECT, true)
	_add_setting(StarHarnessClient.SETTING_TOKEN_ENV, "")
	ProjectSettings.save()
	add_autoload_singleton(AUTOLOAD_NAME, AUTOLOAD_PATH)


func _disable_plugin() -> void:
	remove_autoload_singleton(AUTOLOAD_NAME)


func _add_setting(setting: String, default_value: Variant) -> void:
	# Keep a value the developer already chose; only fill in what is missing.
	if not ProjectSettings.has_setting(setting):
		ProjectSettings.set_setting(setting, default_value)
	ProjectSettings.set_initial_value(setting, default_value)
