"""Names vulture cannot see being used: frameworks call them, or they are read as data.

Reviewed by hand; each line says who uses the name. `uv run vulture` reads this file as a use.
"""

_ = object()

_.data_received  # asyncio.Protocol callback (godot bridge connection)
_.connection_lost  # asyncio.Protocol callback (godot bridge connection)
_.capture_signals  # uvicorn.Server hook, overridden so the runtime owns the signals
_.should_exit  # uvicorn.Server flag, set to stop serving
_.client_state  # Starlette WebSocket state, set as its receive would on a disconnect
_.field_title_should_be_set  # pydantic GenerateJsonSchema hook (tool parameter schemas)
_.authenticated_clients  # a field of the bridge status the editor reads
_.reasoning_content  # pydantic field of the mock's chat request model
_.accepted_day  # a column of the voyage store's quest rows
_.closed_day  # a column of the voyage store's quest rows
_.interrupted  # a key of assistant/message data (TypedDict), read with .get()
_.exc_text  # logging.LogRecord's cached traceback text; the outage filter clears it
_.__getattr__  # module-level (PEP 562): starharness.npc loads its server names on first use
# Parameters of godot_* tools (pydantic models): the editor addon reads them from the call.
_.max_depth
_.node_path
_.wait_ms
_.preset
_.output_dir
_.cursor
_.include_addons
_.pending_approvals  # a field of the session protocol's SessionOpened, serialized for clients
# Keys of context-management session event data (TypedDicts in runtime/context/events.py),
# written as dict literals by compaction and read with .get() by chat and the docs.
_.tokens_before
_.tokens_after
_.chars_saved
# The ACP Agent interface (runtime/acp/agent.py): the agent-client-protocol library calls these
# methods by name, and passes these parameters by keyword.
_.on_connect
_.close_session
_.fork_session
_.set_session_mode
_.set_config_option
_.ext_method
_.ext_notification
_.client_capabilities
_.client_info
_.additional_directories
_.mcp_servers
_.mode_id
_.config_id
_.method_id

# _fastio/http_socket.py: asyncio calls a protocol's callbacks by name.
_.eof_received
_.pause_writing
_.resume_writing
