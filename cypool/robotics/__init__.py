"""Gymnasium-Robotics envs on cypool's MuJoCo pool (PointMaze, AntMaze): see docs/robotics.md.
Needs gymnasium-robotics (``pip install "cypool[robotics]"``), which generates the maze models."""
