extends Node2D
## Prints the marker line and reports one warning and one error for the capture checks.

@export var speed := 120.0


func _ready() -> void:
	print("SMOKE_OK from Godot ", Engine.get_version_info().string, " (", Smoke.greeting, ")")
	push_warning("SMOKE_WARNING: the addon reports this as a play warning")
	printerr("SMOKE_ERROR: the addon reports this as a play error")
