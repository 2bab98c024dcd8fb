"""`python -m taskhand.agents.outcome_mcp --role ROLE --out FILE`: the outcome tools' server."""

from taskhand.agents.outcome_mcp.server import main

main()
