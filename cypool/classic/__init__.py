"""Classic-control family: gymnasium's classic-control envs as nogil kernels (CartPole so far),
bit-identical to gymnasium's for the same seeds and actions."""
