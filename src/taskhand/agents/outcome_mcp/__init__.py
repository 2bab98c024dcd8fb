"""The outcome tools an agent program calls to finish a unit (submit_case, submit_verdict,
ask), served over MCP by `python -m taskhand.agents.outcome_mcp`; `tools` holds their schemas
and checks, `server` the stdio server that answers the calls (and records nothing).
"""
