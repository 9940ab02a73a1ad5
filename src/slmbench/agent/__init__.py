"""The agent: ReAct loop, action parser, native tool-calling scaffold."""
