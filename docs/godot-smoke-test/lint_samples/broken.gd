extends Node
## Deliberately broken: godot_lint_scripts must report the undeclared identifier on line 6.


func _ready() -> void:
	print(not_declared_anywhere)
