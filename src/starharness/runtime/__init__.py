"""The agent runtime: a kernel of contexts and plugins, and the service packages on it.

Each service package (approvals, llm, loop, prompt, session, telemetry, tools, workspace)
declares its own service key, hooks and events beside the plugin that provides them; import
them from there. This package imports nothing, so `star-harness --help` stays light.
"""
