"""Compiling an MJCF model from Python without the compiler warnings every make would
print for models cypool serves as their references do (gymnasium's half_cheetah.xml,
dm_control's cheetah.xml)."""

# MuJoCo 4's compiler deprecates <compiler settotalmass=...>, which dm_control's cheetah.xml
# (and gymnasium's half_cheetah.xml) use; it still compiles them as dm_control's own loads do
# (the exactness tests compare), so the warning says nothing to a cypool user
KNOWN_WARNINGS = ("compiler attribute 'settotalmass' is deprecated",)


def compile_xml(path):
    """``mujoco.MjModel.from_xml_path(path)`` without the compiler warnings of
    KNOWN_WARNINGS, which MuJoCo's default handler would print (and append to
    MUJOCO_LOG.TXT in the working directory) at every make; any other warning is passed on
    (to the warning callback installed before, else printed to stderr as MuJoCo prints it)."""
    import sys

    import mujoco
    prev = mujoco.get_mju_user_warning()
    other = []

    def keep(msg):
        if not msg.startswith(KNOWN_WARNINGS):
            other.append(msg)

    mujoco.set_mju_user_warning(keep)
    try:
        model = mujoco.MjModel.from_xml_path(path)
    finally:
        mujoco.set_mju_user_warning(prev)
    for msg in other:
        if prev is not None:
            prev(msg)
        else:
            sys.stderr.write(f"WARNING: {msg}\n\n")
    return model
