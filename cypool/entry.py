"""The built-in families, in the order their ids are listed: the one place outside the
family folders that names them. Importing a family's registration module registers it
(cypool.registry): ``<family>/registration.py``, or the package itself for a family written
on the public env API as a user's package is (classic control); a new family is one folder
plus one line here."""
import importlib

BUILTIN_FAMILIES = (
    "cypool.mujoco.registration",
    "cypool.atari.registration",
    "cypool.classic",
    "cypool.toy_text.registration",
    "cypool.box2d.registration",
    "cypool.dm_control.registration",
    "cypool.minatar.registration",
    "cypool.minigrid.registration",
    "cypool.mpe2.registration",
    "cypool.robotics.registration",
)

for _module in BUILTIN_FAMILIES:
    importlib.import_module(_module)
del _module
