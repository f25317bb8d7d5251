"""Classic-control family: gymnasium's classic-control envs as nogil kernels (CartPole,
MountainCar, Pendulum, Acrobot, MountainCarContinuous), bit-identical to gymnasium's for the
same seeds and actions."""
