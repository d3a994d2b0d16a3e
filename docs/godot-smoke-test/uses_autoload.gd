extends Node
## Refers to the Smoke autoload; checked alone it must still lint clean.


func greet() -> String:
	return Smoke.greeting
