"""The agent's tools over the seeded world, their schemas, the sandbox and fault injection."""
