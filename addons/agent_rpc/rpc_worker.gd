@tool
extends RefCounted
## Runs blocking work (file scans, subprocesses, resource loads) off the editor's main
## thread; callers await the result frame by frame, so the editor stays responsive.

var _tree: SceneTree
var _orphans: Array[Thread] = []


func _init(tree: SceneTree) -> void:
	_tree = tree


## Run `job` on a thread. {"done": true, "value": ...} or {"done": false, "timedOut"|"error"}.
func run(job: Callable, timeout_ms: int = 0) -> Dictionary:
	var thread := Thread.new()
	if thread.start(job) != OK:
		return {"done": false, "error": "could not start a worker thread"}
	var started := Time.get_ticks_msec()
	while thread.is_alive():
		if timeout_ms > 0 and Time.get_ticks_msec() - started >= timeout_ms:
			# The thread cannot be killed; it is joined once it ends on its own.
			_orphans.append(thread)
			return {"done": false, "timedOut": true}
		await _tree.process_frame
	return {"done": true, "value": thread.wait_to_finish()}


## Load a resource with the threaded loader, awaiting frames meanwhile; null on failure.
func load_resource(path: String) -> Resource:
	if ResourceLoader.load_threaded_request(path) != OK:
		return null
	var status := ResourceLoader.load_threaded_get_status(path)
	while status == ResourceLoader.THREAD_LOAD_IN_PROGRESS:
		await _tree.process_frame
		status = ResourceLoader.load_threaded_get_status(path)
	if status != ResourceLoader.THREAD_LOAD_LOADED:
		return null
	return ResourceLoader.load_threaded_get(path)


## Run a program and capture its output (stderr merged); meant to be called on a thread.
func execute(program: String, arguments: PackedStringArray) -> Dictionary:
	var output: Array = []
	var code := OS.execute(program, arguments, output, true, false)
	return {"exitCode": code, "output": "\n".join(PackedStringArray(output))}


## Join threads that outlived their caller's timeout; call it every frame.
func reap() -> void:
	for thread in _orphans.duplicate():
		if not thread.is_alive():
			thread.wait_to_finish()
			_orphans.erase(thread)


## Join every thread (on shutdown).
func shutdown() -> void:
	for thread in _orphans:
		thread.wait_to_finish()
	_orphans.clear()
