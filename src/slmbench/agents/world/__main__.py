"""``python -m slmbench.agents.world [SEED]`` prints the world's Markdown listing."""

import sys

from slmbench.agents.world import World, describe

print(describe(World.create(int(sys.argv[1]) if len(sys.argv) > 1 else 0)), end="")
