"""dm_control suite family: dm_control's tasks, bit for bit, on cypool's MuJoCo engine."""
