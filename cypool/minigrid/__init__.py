"""MiniGrid (minigrid 3.2.0) envs: cypool.minigrid._minigrid's pool, ids in registration."""
