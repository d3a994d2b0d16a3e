extends Node
## An autoload, so linting uses_autoload.gd proves the false-positive filter.

var greeting := "autoload ready"
