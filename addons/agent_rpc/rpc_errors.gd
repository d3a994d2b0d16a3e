@tool
extends RefCounted
## The newest play errors and warnings, consecutive duplicates folded into a count.

signal recorded(severity: String, message: String)

const MAX_ERRORS := 50

var _items: Array[Dictionary] = []
var _since := Time.get_ticks_msec()


## Keep one error or warning and announce it (the plugin forwards it as a play_error event).
func record(severity: String, message: String) -> void:
	var text := message.strip_edges()
	if text == "":
		return
	var kind := "warning" if severity == "warning" else "error"
	if not _items.is_empty():
		var last: Dictionary = _items[_items.size() - 1]
		if str(last["severity"]) == kind and str(last["message"]) == text:
			last["count"] = int(last.get("count", 1)) + 1
			return
	_items.append({"severity": kind, "message": text, "time_ms": Time.get_ticks_msec() - _since})
	if _items.size() > MAX_ERRORS:
		_items.pop_front()
	recorded.emit(kind, text)


## Forget everything; times restart from now (a run calls this before playing).
func clear() -> void:
	_items.clear()
	_since = Time.get_ticks_msec()


## A copy of the buffer, oldest first.
func snapshot() -> Array:
	return _items.duplicate(true)


## How many distinct entries the buffer holds.
func size() -> int:
	return _items.size()
