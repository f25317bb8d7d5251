# Declarations for cypool/atari/_ale_shim.hpp: the noexcept, int-status layer over
# ale::ALEInterface that nogil kernels call (see that header for each contract).
#
# Every function here catches ALE's C++ exceptions and returns a status (CP_ALE_OK = 0);
# the text of the last failure on the calling thread is cp_ale_last_error().  So they may
# be called inside prange without the GIL, and a failure becomes a per-env status that is
# raised once the GIL is back.
from libc.stdint cimport uint8_t
from libc.stddef cimport size_t

from cypool.atari._ale.ale_interface cimport ALEInterface


cdef extern from "_ale_shim.hpp" nogil:
    enum:
        CP_ALE_OK
        CP_ALE_ERR_EXCEPTION   # ALE threw a std::exception
        CP_ALE_ERR_UNKNOWN     # ALE threw something else
        CP_ALE_ERR_ARG         # null pointer, buffer too small, value out of range
        CP_ALE_ERR_NO_ROM      # the call needs a loaded ROM
        CP_ALE_ERR_ROM         # ROM file missing or not a game ALE supports
    enum:
        CP_ALE_NUM_ACTIONS     # 18: size of the full action set
        CP_ALE_RAM_SIZE        # 128 bytes of console RAM
    enum:
        CP_ALE_LOG_INFO
        CP_ALE_LOG_WARNING
        CP_ALE_LOG_ERROR

    const char* cp_ale_last_error() noexcept
    int cp_ale_set_log_level(int level) noexcept

    int cp_ale_create(ALEInterface** out) noexcept
    void cp_ale_destroy(ALEInterface* ale) noexcept

    # settings take effect at the next load / reload of the ROM
    int cp_ale_set_int(ALEInterface* ale, const char* key, int value) noexcept
    int cp_ale_set_float(ALEInterface* ale, const char* key, float value) noexcept
    int cp_ale_set_bool(ALEInterface* ale, const char* key, int value) noexcept

    int cp_ale_load_rom(ALEInterface* ale, const char* path) noexcept
    int cp_ale_rom_info(const char* path, int* minimal, size_t* n_minimal, int* legal,
                        size_t* n_legal, int* modes, size_t modes_capacity, size_t* n_modes,
                        int* difficulties, size_t difficulties_capacity,
                        size_t* n_difficulties) noexcept
    int cp_ale_reload_rom(ALEInterface* ale) noexcept
    int cp_ale_reload_rom_keep_rng(ALEInterface* ale) noexcept
    int cp_ale_seed(ALEInterface* ale, int seed) noexcept
    int cp_ale_set_mode(ALEInterface* ale, int mode) noexcept
    int cp_ale_set_difficulty(ALEInterface* ale, int difficulty) noexcept
    int cp_ale_available_modes(ALEInterface* ale, int* out, size_t capacity,
                               size_t* count) noexcept
    int cp_ale_available_difficulties(ALEInterface* ale, int* out, size_t capacity,
                                      size_t* count) noexcept

    int cp_ale_reset_game(ALEInterface* ale) noexcept
    int cp_ale_act(ALEInterface* ale, int action, float paddle_strength, int* reward) noexcept
    int cp_ale_game_over(ALEInterface* ale, int with_truncation, int* out) noexcept
    int cp_ale_game_truncated(ALEInterface* ale, int* out) noexcept
    int cp_ale_lives(ALEInterface* ale, int* out) noexcept
    int cp_ale_frame_number(ALEInterface* ale, int* out) noexcept
    int cp_ale_episode_frame_number(ALEInterface* ale, int* out) noexcept

    int cp_ale_screen_shape(ALEInterface* ale, int* height, int* width) noexcept
    int cp_ale_screen_grayscale(ALEInterface* ale, uint8_t* out, size_t capacity) noexcept
    int cp_ale_screen_rgb(ALEInterface* ale, uint8_t* out, size_t capacity) noexcept
    int cp_ale_screen_indices(ALEInterface* ale, uint8_t* out, size_t capacity) noexcept
    int cp_ale_ram(ALEInterface* ale, uint8_t* out, size_t capacity) noexcept
    int cp_ale_save_state(ALEInterface* ale, char** out, size_t* size) noexcept
    int cp_ale_load_state(ALEInterface* ale, const char* data, size_t size) noexcept

    int cp_ale_legal_actions(ALEInterface* ale, int* out, size_t capacity,
                             size_t* count) noexcept
    int cp_ale_minimal_actions(ALEInterface* ale, int* out, size_t capacity,
                               size_t* count) noexcept
