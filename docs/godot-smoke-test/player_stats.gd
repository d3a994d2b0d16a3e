class_name PlayerStats
extends Resource
## A class_name script for godot_list_global_classes and the conflict check.

@export var health := 100
