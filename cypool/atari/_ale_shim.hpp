// A thin noexcept layer over ale::ALEInterface for cypool's nogil kernels.
//
// Why it exists: ALE reports failures by throwing C++ exceptions (and, in a few
// loadROM paths, by calling std::exit).  Cython code inside `prange` must not let
// an exception escape and cannot hold Python objects, so every call that a
// kernel makes goes through one of these functions instead.  Each one
//   * takes raw pointers and C scalars only (no Python objects, no GIL needed),
//   * catches every exception and turns it into a status code (0 = success),
//   * stores the exception text in a thread-local buffer, read back with
//     cp_ale_last_error() on the same thread right after the failing call.
//
// Threading: an ALEInterface is not thread-safe, so give each env its own
// instance; different instances may be driven from different threads at once.
#ifndef CYPOOL_ATARI_ALE_SHIM_HPP
#define CYPOOL_ATARI_ALE_SHIM_HPP

#include <cstddef>
#include <cstdint>

namespace ale {
class ALEInterface;
}

// Status codes returned by every int-valued cp_ale_* function.
enum cp_ale_status {
  CP_ALE_OK = 0,
  CP_ALE_ERR_EXCEPTION = 1,  // ALE threw a std::exception; text in cp_ale_last_error()
  CP_ALE_ERR_UNKNOWN = 2,    // ALE threw something that is not a std::exception
  CP_ALE_ERR_ARG = 3,        // null pointer, buffer too small, action or seed out of range
  CP_ALE_ERR_NO_ROM = 4,     // the call needs a ROM, and none has been loaded yet
  CP_ALE_ERR_ROM = 5,        // ROM file missing, unreadable or not a supported game
};

// Upper bounds that let callers size buffers statically.
enum {
  CP_ALE_NUM_ACTIONS = 18,  // size of ALE's full (legal) action set for player A
  CP_ALE_RAM_SIZE = 128,    // bytes of Atari 2600 RAM
};

// ALE's log levels, for cp_ale_set_log_level (ale::Logger::mode).
enum {
  CP_ALE_LOG_INFO = 0,
  CP_ALE_LOG_WARNING = 1,
  CP_ALE_LOG_ERROR = 2,
};

// Text of the last failure on the calling thread ("" if none yet).  Valid until
// the next failing cp_ale_* call on the same thread.
const char* cp_ale_last_error() noexcept;

// Process-wide: what ALE prints to stderr.  Not synchronised; set it once,
// before creating instances.
int cp_ale_set_log_level(int level) noexcept;

// Lifetime.  *out is NULL after a failure.  cp_ale_destroy(NULL) is a no-op.
int cp_ale_create(ale::ALEInterface** out) noexcept;
void cp_ale_destroy(ale::ALEInterface* ale) noexcept;

// Settings, keyed by ALE's setting names ("repeat_action_probability",
// "max_num_frames_per_episode", "frame_skip", ...).  Like ALE itself, they take
// effect at the next cp_ale_load_rom.  An unknown key is CP_ALE_ERR_EXCEPTION.
int cp_ale_set_int(ale::ALEInterface* ale, const char* key, int value) noexcept;
int cp_ale_set_float(ale::ALEInterface* ale, const char* key, float value) noexcept;
int cp_ale_set_bool(ale::ALEInterface* ale, const char* key, int value) noexcept;

// Loads a ROM and resets the console.  The file is checked first: it must exist
// and be the ROM of a game ALE knows (found by MD5 or by its snake_case file
// name, and then with that game's MD5, as ale-py requires), because ALE would
// call std::exit on those errors (a file with a game's name that is no
// cartridge): they come back as CP_ALE_ERR_ROM instead.
int cp_ale_load_rom(ale::ALEInterface* ale, const char* path) noexcept;

// What a ROM offers, from ALE's table of games and without an emulator (a ROM
// load costs ~6 ms, a whole console): its minimal
// and full (legal) action sets (CP_ALE_NUM_ACTIONS entries always suffice), game
// modes and difficulties.  Counts are set even when a capacity is too small
// (then CP_ALE_ERR_ARG).  A missing or unknown ROM is CP_ALE_ERR_ROM.
int cp_ale_rom_info(const char* path, int* minimal, std::size_t* n_minimal, int* legal,
                    std::size_t* n_legal, int* modes, std::size_t modes_capacity,
                    std::size_t* n_modes, int* difficulties,
                    std::size_t difficulties_capacity, std::size_t* n_difficulties) noexcept;

// Seeds ALE's environment RNG (sticky actions) the way gymnasium's AtariEnv
// and ale-py's vector env do: sets "random_seed" and reloads the current ROM.
// seed must be >= 0.  Frame counters restart, as after any ROM load.
int cp_ale_seed(ale::ALEInterface* ale, int seed) noexcept;

// Reloads the current ROM, as ALEInterface::loadROM with an empty path: every
// setting (random_seed above all) takes effect and the frame counters restart.
// Unlike cp_ale_seed it takes the seed from the settings as they are, so that a
// caller can set any int "random_seed" ALE accepts: gymnasium's AtariEnv sets
// np.int32 of a uint32, which is negative half the time (ALE then seeds its
// generator with the same 32 bits; only -1, "seed from the clock", is special).
int cp_ale_reload_rom(ale::ALEInterface* ale) noexcept;

// Reloads the current ROM like cp_ale_reload_rom, so that settings read only at a load
// (repeat_action_probability above all) take effect, but carries the environment's
// random generator (the sticky-action stream) across the reload instead of reseeding
// it from "random_seed": an env whose settings change keeps drawing from its stream.
// The console and its own fixed-seed generator restart, as after any load.
int cp_ale_reload_rom_keep_rng(ale::ALEInterface* ale) noexcept;

// Game mode and difficulty (ALE's setMode/setDifficulty): recorded now and
// applied by the next reset_game.  A value the game does not offer is
// CP_ALE_ERR_EXCEPTION.  The available values are listed like action sets.
int cp_ale_set_mode(ale::ALEInterface* ale, int mode) noexcept;
int cp_ale_set_difficulty(ale::ALEInterface* ale, int difficulty) noexcept;
int cp_ale_available_modes(ale::ALEInterface* ale, int* out, std::size_t capacity,
                           std::size_t* count) noexcept;
int cp_ale_available_difficulties(ale::ALEInterface* ale, int* out, std::size_t capacity,
                                  std::size_t* count) noexcept;

// Resets the game (not the whole console), as ALEInterface::reset_game.
int cp_ale_reset_game(ale::ALEInterface* ale) noexcept;

// One emulator step (frame_skip frames) of player A's action in [0, 18).
// paddle_strength is in [-1, 1]; 1.0 for joystick games.
int cp_ale_act(ale::ALEInterface* ale, int action, float paddle_strength,
               int* reward) noexcept;

// *out = 1 if the episode has ended.  with_truncation != 0 also counts reaching
// max_num_frames_per_episode (ALE's game_over(true)); 0 asks for the game's own
// end only (game_over(false), gymnasium's `terminated`).
int cp_ale_game_over(ale::ALEInterface* ale, int with_truncation, int* out) noexcept;
int cp_ale_game_truncated(ale::ALEInterface* ale, int* out) noexcept;
int cp_ale_lives(ale::ALEInterface* ale, int* out) noexcept;

// Frames since the ROM was loaded / since the current episode started.
int cp_ale_frame_number(ale::ALEInterface* ale, int* out) noexcept;
int cp_ale_episode_frame_number(ale::ALEInterface* ale, int* out) noexcept;

// Screen size in pixels, known once a ROM is loaded: 210 x 160 for most games, up to
// 250 lines for a few (Pacman, Adventure: PAL cartridges; Carnival 214, Pooyan 220, ...).
int cp_ale_screen_shape(ale::ALEInterface* ale, int* height, int* width) noexcept;

// Copy the current screen into a C-contiguous uint8 buffer of at least
// `capacity` bytes: grayscale is (height, width), RGB is (height, width, 3).
// Too small a buffer is CP_ALE_ERR_ARG and nothing is written.
int cp_ale_screen_grayscale(ale::ALEInterface* ale, std::uint8_t* out,
                            std::size_t capacity) noexcept;
int cp_ale_screen_rgb(ale::ALEInterface* ale, std::uint8_t* out,
                      std::size_t capacity) noexcept;

// Copy the current screen's palette indices (ALEInterface::getScreen, as ALE holds them,
// colour-averaged when "color_averaging" is set) into a (height, width) uint8 buffer.
int cp_ale_screen_indices(ale::ALEInterface* ale, std::uint8_t* out,
                          std::size_t capacity) noexcept;

// Copy the 128 bytes of console RAM; capacity must be >= CP_ALE_RAM_SIZE.
int cp_ale_ram(ale::ALEInterface* ale, std::uint8_t* out, std::size_t capacity) noexcept;

// The emulator's whole state (console, game, and the environment's random stream
// behind sticky actions: ALE's cloneState(true)), serialized by ALE into *out,
// allocated with malloc (the caller frees it), *size bytes.
int cp_ale_save_state(ale::ALEInterface* ale, char** out, std::size_t* size) noexcept;
// Restore a state saved from an instance with the same game loaded (ALE refuses
// another game's).
int cp_ale_load_state(ale::ALEInterface* ale, const char* data, std::size_t size) noexcept;

// Action sets as action ids.  *count receives the set's size even when
// capacity is too small (then CP_ALE_ERR_ARG, nothing written);
// CP_ALE_NUM_ACTIONS always suffices.
int cp_ale_legal_actions(ale::ALEInterface* ale, int* out, std::size_t capacity,
                         std::size_t* count) noexcept;
int cp_ale_minimal_actions(ale::ALEInterface* ale, int* out, std::size_t capacity,
                           std::size_t* count) noexcept;

#endif  // CYPOOL_ATARI_ALE_SHIM_HPP
