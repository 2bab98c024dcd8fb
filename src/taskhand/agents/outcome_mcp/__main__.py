"""`python -m taskhand.agents.outcome_mcp --role ROLE`: the outcome tools' server."""

from taskhand.agents.outcome_mcp.server import main

main()
