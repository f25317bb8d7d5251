"""mpe2 1.1.1's particle worlds (PettingZoo's MPE) as a cypool family whose envs are whole
multi-agent envs: see :mod:`cypool.mpe2.family` for the contract."""
