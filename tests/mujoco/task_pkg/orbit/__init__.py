"""Orbit-v0: a user's MuJoCo task package; importing it registers the id."""
import cypool.mujoco

cypool.mujoco.register_task("Orbit-v0", "orbit._orbit")
