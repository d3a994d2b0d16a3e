extends Node
## A runtime error: the debugger breaks, and the addon reports the break reason.


func _ready() -> void:
	var missing: Node = null
	missing.queue_free()
