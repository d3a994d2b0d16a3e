@tool
extends RefCounted
## The addon's side of the wire: it connects out to the bridge, sends the editor_ready
## handshake, frames JSON lines both ways and reconnects whenever the endpoint file changes.

signal message_received(message: Dictionary)
signal link_changed(connected: bool)

enum State { IDLE, WAITING, CONNECTING, CONNECTED }

const RpcEndpoint := preload("res://addons/agent_rpc/rpc_endpoint.gd")

const CONNECT_TIMEOUT_MS := 1200
const RECONNECT_DELAY_MS := 500
const MAX_BACKOFF_MS := 5000
const RECONNECTS_BEFORE_ADVANCE := 4
const ENDPOINT_POLL_MS := 1000
const QUICK_CLOSE_MS := 1500
const FIRST_PORT := 8765
const PORT_COUNT := 10
const MAX_LINE_BYTES := 16 * 1024 * 1024
const NEWLINE := 10

## Returns the editor_ready fields (everything except the token, which is added here).
var handshake: Callable

var _state := State.IDLE
var _peer: StreamPeerTCP = null
var _endpoint_path := ""
var _endpoint_text := ""
var _host := "127.0.0.1"
var _token := ""
var _candidates: Array[int] = []
var _candidate_index := 0
var _failures_here := 0
var _state_since := 0
var _next_attempt_at := 0
var _last_poll_at := -ENDPOINT_POLL_MS
var _backoff_ms := RECONNECT_DELAY_MS
var _inbox := PackedByteArray()
var _outbox := PackedByteArray()
var _discarding := false
var _last_notice := ""


## Drive the connection; call it every frame.
func poll() -> void:
	var now := Time.get_ticks_msec()
	if now - _last_poll_at >= ENDPOINT_POLL_MS:
		_last_poll_at = now
		_check_endpoint(now)
	if _state == State.WAITING and now >= _next_attempt_at:
		_start_connect(now)
	elif _state == State.CONNECTING:
		_poll_connecting(now)
	elif _state == State.CONNECTED:
		_poll_connected(now)


## True while the socket to the bridge is open.
func is_linked() -> bool:
	return _state == State.CONNECTED


## Queue one JSON object as a line; dropped when not connected (the bridge fails the call).
func send(message: Dictionary) -> void:
	if _state != State.CONNECTED:
		return
	_outbox.append_array((JSON.stringify(message) + "\n").to_utf8_buffer())
	_flush()


## Close the socket and stop reconnecting.
func close() -> void:
	_drop_socket()
	_state = State.IDLE


## The endpoint file being watched (for messages and the debugger state).
func endpoint_path() -> String:
	return _endpoint_path


func _check_endpoint(now: int) -> void:
	var path := RpcEndpoint.resolve_path()
	var text := ""
	if FileAccess.file_exists(path):
		text = FileAccess.get_file_as_string(path)
	if path == _endpoint_path and text == _endpoint_text:
		return
	_endpoint_path = path
	_endpoint_text = text
	var reading := RpcEndpoint.read(path)
	_drop_socket()
	if not reading.get("ok", false):
		_notice("Agent RPC: waiting: %s" % reading.get("error", ""))
		_state = State.IDLE
		return
	var endpoint: Dictionary = reading["endpoint"]
	_host = str(endpoint["host"])
	_token = str(endpoint["token"])
	_candidates = [int(endpoint["port"])]
	for port in range(FIRST_PORT, FIRST_PORT + PORT_COUNT):
		if not _candidates.has(port):
			_candidates.append(port)
	_candidate_index = 0
	_failures_here = 0
	_backoff_ms = RECONNECT_DELAY_MS
	_state = State.WAITING
	_next_attempt_at = now


func _start_connect(now: int) -> void:
	_peer = StreamPeerTCP.new()
	var port := _candidates[_candidate_index]
	if _peer.connect_to_host(_host, port) != OK:
		_retry_later(now)
		return
	_state = State.CONNECTING
	_state_since = now


func _poll_connecting(now: int) -> void:
	_peer.poll()
	var status := _peer.get_status()
	if status == StreamPeerTCP.STATUS_CONNECTED:
		_on_connected(now)
	elif status != StreamPeerTCP.STATUS_CONNECTING or now - _state_since > CONNECT_TIMEOUT_MS:
		_retry_later(now)


func _on_connected(now: int) -> void:
	_peer.set_no_delay(true)
	_state = State.CONNECTED
	_state_since = now
	_failures_here = 0
	_inbox.clear()
	_outbox.clear()
	_discarding = false
	var ready: Dictionary = handshake.call()
	ready["type"] = "editor_ready"
	ready["token"] = _token
	send(ready)
	_notice("Agent RPC: connected to %s:%d" % [_host, _candidates[_candidate_index]])
	link_changed.emit(true)


func _poll_connected(now: int) -> void:
	_peer.poll()
	if _peer.get_status() != StreamPeerTCP.STATUS_CONNECTED:
		_on_lost(now)
		return
	_flush()
	var available := _peer.get_available_bytes()
	if available <= 0:
		return
	var chunk: Array = _peer.get_partial_data(available)
	if int(chunk[0]) == OK:
		_feed(chunk[1])


func _on_lost(now: int) -> void:
	var lived := now - _state_since
	_drop_socket()
	link_changed.emit(false)
	if lived < QUICK_CLOSE_MS:
		# Closed right after the handshake: most likely a token the bridge refused.
		_backoff_ms = mini(_backoff_ms * 2, MAX_BACKOFF_MS)
		_notice(
			(
				"Agent RPC: the bridge closed the connection right after the handshake; "
				+ "the token in %s may be stale (restart the agent or reinstall the addon)"
			)
			% _endpoint_path
		)
	else:
		_backoff_ms = RECONNECT_DELAY_MS
		_notice("Agent RPC: disconnected; reconnecting")
	_state = State.WAITING
	_next_attempt_at = now + _backoff_ms


func _retry_later(now: int) -> void:
	_drop_socket()
	_failures_here += 1
	if _failures_here >= RECONNECTS_BEFORE_ADVANCE:
		_failures_here = 0
		_candidate_index = (_candidate_index + 1) % _candidates.size()
	_state = State.WAITING
	_next_attempt_at = now + _backoff_ms


func _drop_socket() -> void:
	if _peer != null:
		_peer.disconnect_from_host()
		_peer = null
	_inbox.clear()
	_outbox.clear()


func _flush() -> void:
	while _peer != null and not _outbox.is_empty():
		var written: Array = _peer.put_partial_data(_outbox)
		var sent := int(written[1])
		if int(written[0]) != OK or sent <= 0:
			return
		_outbox = _outbox.slice(sent)


func _feed(data: PackedByteArray) -> void:
	_inbox.append_array(data)
	var newline := _inbox.find(NEWLINE)
	while newline >= 0:
		var line := _inbox.slice(0, newline)
		_inbox = _inbox.slice(newline + 1)
		if _discarding:
			_discarding = false
		else:
			_handle_line(line)
		newline = _inbox.find(NEWLINE)
	if _inbox.size() > MAX_LINE_BYTES:
		_inbox.clear()
		_discarding = true


func _handle_line(line: PackedByteArray) -> void:
	var text := line.get_string_from_utf8().strip_edges()
	if text == "":
		return
	var parsed: Variant = JSON.parse_string(text)
	if typeof(parsed) == TYPE_DICTIONARY:
		message_received.emit(parsed)


func _notice(text: String) -> void:
	if text == _last_notice:
		return
	_last_notice = text
	print(text)
