// Implementation of the noexcept ALE shim; see _ale_shim.hpp for the contract.
#include "_ale_shim.hpp"

#include <cstdlib>
#include <cstring>
#include <new>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "ale/ale_interface.hpp"
#include "ale/environment/stella_environment.hpp"
#include "ale/emucore/Deserializer.hxx"
#include "ale/emucore/MD5.hxx"
#include "ale/emucore/OSystem.hxx"
#include "ale/emucore/Serializer.hxx"
#include "ale/games/Roms.hpp"

namespace {

thread_local char t_last_error[512] = "";

void set_error(const char* message) noexcept {
  std::strncpy(t_last_error, message, sizeof(t_last_error) - 1);
  t_last_error[sizeof(t_last_error) - 1] = '\0';
}

// Runs body() and converts anything it throws into a status code.  A body that
// returns nothing succeeds with CP_ALE_OK; one that returns an int returns its
// own status.  The try block costs nothing on the non-throwing path.
template <class Body>
int guarded(Body&& body) noexcept {
  try {
    if constexpr (std::is_void_v<decltype(body())>) {
      body();
      return CP_ALE_OK;
    } else {
      return body();
    }
  } catch (const std::exception& e) {
    set_error(e.what());
    return CP_ALE_ERR_EXCEPTION;
  } catch (...) {
    set_error("unknown C++ exception from ALE");
    return CP_ALE_ERR_UNKNOWN;
  }
}

int arg_error(const char* message) noexcept {
  set_error(message);
  return CP_ALE_ERR_ARG;
}

// Most calls dereference ALEInterface::environment, which exists only after a
// ROM was loaded; without this check they would crash instead of failing.
int check_loaded(const ale::ALEInterface* ale) noexcept {
  if (ale == nullptr) return arg_error("null ALEInterface");
  if (!ale->environment || !ale->romSettings) {
    set_error("no ROM loaded: call cp_ale_load_rom first");
    return CP_ALE_ERR_NO_ROM;
  }
  return CP_ALE_OK;
}

// ALEInterface::loadROM calls std::exit when the file is missing, when no game
// matches it, or when a file matched by name only is no cartridge, so files are
// checked here first: it must exist and have the MD5 of the game ALE matches it to.  On success *game holds
// ALE's description of the game (action sets, modes), built without an emulator.
int open_rom(const std::filesystem::path& path, std::unique_ptr<ale::RomSettings>* game) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    set_error(("ROM file not found: " + path.string()).c_str());
    return CP_ALE_ERR_ROM;
  }
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    set_error(("cannot open ROM file: " + path.string()).c_str());
    return CP_ALE_ERR_ROM;
  }
  const std::vector<std::uint8_t> image((std::istreambuf_iterator<char>(file)),
                                        std::istreambuf_iterator<char>());
  const std::string md5 =
      ale::stella::MD5(image.data(), static_cast<std::uint32_t>(image.size()));
  game->reset(ale::buildRomRLWrapper(path, md5));
  if (!*game) {
    set_error(("not a ROM supported by ALE (unknown MD5 and file name): " +
               path.string()).c_str());
    return CP_ALE_ERR_ROM;
  }
  // ALE accepts a file that only has a game's name, with a warning, and then exits the
  // process if the emulator cannot make a cartridge of it; ale-py refuses such files
  // (it checks the MD5 too), and so does cypool.
  if ((*game)->md5() != md5) {
    set_error(("ROM file " + path.string() + " is not ALE's " + (*game)->rom() +
               " ROM (MD5 " + md5 + ", expected " + (*game)->md5() + ")").c_str());
    game->reset();
    return CP_ALE_ERR_ROM;
  }
  return CP_ALE_OK;
}

int check_rom_file(const std::filesystem::path& path) {
  std::unique_ptr<ale::RomSettings> game;
  return open_rom(path, &game);
}

// Copies an ALE vector (actions, modes, difficulties) into a caller's int buffer.
template <class Vect>
int copy_values(const Vect& values, int* out, std::size_t capacity, std::size_t* count) {
  *count = values.size();
  if (capacity < values.size()) return arg_error("buffer too small");
  for (std::size_t i = 0; i < values.size(); ++i) out[i] = static_cast<int>(values[i]);
  return CP_ALE_OK;
}

// Runs body() under guarded() on an instance with a ROM loaded: the frame of
// every per-instance call.  check_loaded comes first, so a null or unloaded
// instance is reported before the body's own argument checks.
template <class Body>
int with_rom(ale::ALEInterface* ale, Body&& body) noexcept {
  const int status = check_loaded(ale);
  if (status != CP_ALE_OK) return status;
  return guarded(std::forward<Body>(body));
}

// Stores get() in *out: the int and flag queries (lives, frame numbers, game over).
template <class Get>
int query_int(ale::ALEInterface* ale, int* out, Get&& get) noexcept {
  return with_rom(ale, [&]() -> int {
    if (out == nullptr) return arg_error("null output pointer");
    *out = get();
    return CP_ALE_OK;
  });
}

// Copies the vector that values() returns into out: the action, mode and difficulty lists.
template <class Values>
int query_values(ale::ALEInterface* ale, int* out, std::size_t capacity, std::size_t* count,
                 Values&& values) noexcept {
  return with_rom(ale, [&]() -> int {
    if (count == nullptr || (out == nullptr && capacity > 0)) return arg_error("null pointer");
    return copy_values(values(), out, capacity, count);
  });
}

// Sets one of ALE's settings by name; settings need no ROM.
template <class Set>
int set_setting(ale::ALEInterface* ale, const char* key, Set&& set) noexcept {
  if (ale == nullptr || key == nullptr) return arg_error("null argument");
  return guarded(std::forward<Set>(set));
}

// Copies the screen through the colour palette: 3 bytes a pixel if rgb, else 1.
int copy_screen(ale::ALEInterface* ale, std::uint8_t* out, std::size_t capacity,
                bool rgb) noexcept {
  return with_rom(ale, [&]() -> int {
    if (out == nullptr) return arg_error("null output pointer");
    const ale::ALEScreen& screen = ale->getScreen();
    const std::size_t n = screen.height() * screen.width();
    ale::ColourPalette& palette = ale->theOSystem->colourPalette();
    if (rgb) {
      if (capacity < 3 * n) return arg_error("RGB buffer too small");
      palette.applyPaletteRGB(out, screen.getArray(), n);
    } else {
      if (capacity < n) return arg_error("grayscale buffer too small");
      palette.applyPaletteGrayscale(out, screen.getArray(), n);
    }
    return CP_ALE_OK;
  });
}

}  // namespace

const char* cp_ale_last_error() noexcept { return t_last_error; }

int cp_ale_set_log_level(int level) noexcept {
  if (level < CP_ALE_LOG_INFO || level > CP_ALE_LOG_ERROR) return arg_error("bad log level");
  return guarded([&] { ale::Logger::setMode(static_cast<ale::Logger::mode>(level)); });
}

int cp_ale_create(ale::ALEInterface** out) noexcept {
  if (out == nullptr) return arg_error("null output pointer");
  *out = nullptr;
  return guarded([&] { *out = new ale::ALEInterface(); });
}

void cp_ale_destroy(ale::ALEInterface* ale) noexcept { delete ale; }

int cp_ale_set_int(ale::ALEInterface* ale, const char* key, int value) noexcept {
  return set_setting(ale, key, [&] { ale->setInt(key, value); });
}

int cp_ale_set_float(ale::ALEInterface* ale, const char* key, float value) noexcept {
  return set_setting(ale, key, [&] { ale->setFloat(key, value); });
}

int cp_ale_set_bool(ale::ALEInterface* ale, const char* key, int value) noexcept {
  return set_setting(ale, key, [&] { ale->setBool(key, value != 0); });
}

int cp_ale_load_rom(ale::ALEInterface* ale, const char* path) noexcept {
  if (ale == nullptr || path == nullptr) return arg_error("null argument");
  return guarded([&]() -> int {
    const std::filesystem::path rom(path);
    const int status = check_rom_file(rom);
    if (status != CP_ALE_OK) return status;
    ale->loadROM(rom);
    return CP_ALE_OK;
  });
}

int cp_ale_rom_info(const char* path, int* minimal, std::size_t* n_minimal, int* legal,
                    std::size_t* n_legal, int* modes, std::size_t modes_capacity,
                    std::size_t* n_modes, int* difficulties,
                    std::size_t difficulties_capacity, std::size_t* n_difficulties) noexcept {
  if (path == nullptr || minimal == nullptr || n_minimal == nullptr || legal == nullptr ||
      n_legal == nullptr || n_modes == nullptr || n_difficulties == nullptr ||
      (modes == nullptr && modes_capacity > 0) ||
      (difficulties == nullptr && difficulties_capacity > 0)) {
    return arg_error("null argument");
  }
  return guarded([&]() -> int {
    std::unique_ptr<ale::RomSettings> game;
    int status = open_rom(std::filesystem::path(path), &game);
    if (status == CP_ALE_OK)
      status = copy_values(game->getMinimalActionSet(), minimal, CP_ALE_NUM_ACTIONS, n_minimal);
    if (status == CP_ALE_OK)
      status = copy_values(game->getAllActions(), legal, CP_ALE_NUM_ACTIONS, n_legal);
    if (status == CP_ALE_OK)
      status = copy_values(game->getAvailableModes(), modes, modes_capacity, n_modes);
    if (status == CP_ALE_OK)
      status = copy_values(game->getAvailableDifficulties(), difficulties,
                           difficulties_capacity, n_difficulties);
    return status;
  });
}

namespace {
// A reload (loadROM with an empty path) reads the current ROM file again, and ALE exits the
// process when it is gone or no cartridge: checked first, as for a load.
int reload_current(ale::ALEInterface* ale) {
  const int status = check_rom_file(ale->theOSystem->romFile());
  if (status != CP_ALE_OK) return status;
  ale->loadROM({});
  return CP_ALE_OK;
}
}  // namespace

int cp_ale_seed(ale::ALEInterface* ale, int seed) noexcept {
  return with_rom(ale, [&]() -> int {
    if (seed < 0) return arg_error("seed must be >= 0");
    ale->setInt("random_seed", seed);
    return reload_current(ale);
  });
}

int cp_ale_reload_rom(ale::ALEInterface* ale) noexcept {
  return with_rom(ale, [&] { return reload_current(ale); });
}

int cp_ale_reload_rom_keep_rng(ale::ALEInterface* ale) noexcept {
  return with_rom(ale, [&]() -> int {
    ale::stella::Serializer saved;
    ale->environment->getEnvironmentRNG().saveState(saved);
    // a new StellaEnvironment, seeded from "random_seed" ...
    const int status = reload_current(ale);
    if (status != CP_ALE_OK) return status;
    ale::stella::Deserializer in(saved.get_str());
    ale->environment->getEnvironmentRNG().loadState(in);  // ... then given the old stream
    return CP_ALE_OK;
  });
}

int cp_ale_set_mode(ale::ALEInterface* ale, int mode) noexcept {
  return with_rom(ale, [&]() -> int {
    if (mode < 0) return arg_error("mode must be >= 0");
    ale->setMode(static_cast<ale::game_mode_t>(mode));
    return CP_ALE_OK;
  });
}

int cp_ale_set_difficulty(ale::ALEInterface* ale, int difficulty) noexcept {
  return with_rom(ale, [&]() -> int {
    if (difficulty < 0) return arg_error("difficulty must be >= 0");
    ale->setDifficulty(static_cast<ale::difficulty_t>(difficulty));
    return CP_ALE_OK;
  });
}

int cp_ale_available_modes(ale::ALEInterface* ale, int* out, std::size_t capacity,
                           std::size_t* count) noexcept {
  return query_values(ale, out, capacity, count, [&] { return ale->getAvailableModes(); });
}

int cp_ale_available_difficulties(ale::ALEInterface* ale, int* out, std::size_t capacity,
                                  std::size_t* count) noexcept {
  return query_values(ale, out, capacity, count,
                      [&] { return ale->getAvailableDifficulties(); });
}

int cp_ale_reset_game(ale::ALEInterface* ale) noexcept {
  return with_rom(ale, [&] { ale->reset_game(); });
}

int cp_ale_act(ale::ALEInterface* ale, int action, float paddle_strength,
               int* reward) noexcept {
  return with_rom(ale, [&]() -> int {
    if (reward == nullptr) return arg_error("null output pointer");
    if (action < 0 || action >= CP_ALE_NUM_ACTIONS) return arg_error("action out of range [0, 18)");
    *reward = ale->act(static_cast<ale::Action>(action), paddle_strength);
    return CP_ALE_OK;
  });
}

int cp_ale_game_over(ale::ALEInterface* ale, int with_truncation, int* out) noexcept {
  return query_int(ale, out, [&] { return ale->game_over(with_truncation != 0) ? 1 : 0; });
}

int cp_ale_game_truncated(ale::ALEInterface* ale, int* out) noexcept {
  return query_int(ale, out, [&] { return ale->game_truncated() ? 1 : 0; });
}

int cp_ale_lives(ale::ALEInterface* ale, int* out) noexcept {
  return query_int(ale, out, [&] { return ale->lives(); });
}

int cp_ale_frame_number(ale::ALEInterface* ale, int* out) noexcept {
  return query_int(ale, out, [&] { return ale->getFrameNumber(); });
}

int cp_ale_episode_frame_number(ale::ALEInterface* ale, int* out) noexcept {
  return query_int(ale, out, [&] { return ale->getEpisodeFrameNumber(); });
}

int cp_ale_screen_shape(ale::ALEInterface* ale, int* height, int* width) noexcept {
  return with_rom(ale, [&]() -> int {
    if (height == nullptr || width == nullptr) return arg_error("null output pointer");
    const ale::ALEScreen& screen = ale->getScreen();
    *height = static_cast<int>(screen.height());
    *width = static_cast<int>(screen.width());
    return CP_ALE_OK;
  });
}

int cp_ale_screen_grayscale(ale::ALEInterface* ale, std::uint8_t* out,
                            std::size_t capacity) noexcept {
  return copy_screen(ale, out, capacity, false);
}

int cp_ale_screen_rgb(ale::ALEInterface* ale, std::uint8_t* out,
                      std::size_t capacity) noexcept {
  return copy_screen(ale, out, capacity, true);
}

int cp_ale_screen_indices(ale::ALEInterface* ale, std::uint8_t* out,
                          std::size_t capacity) noexcept {
  return with_rom(ale, [&]() -> int {
    if (out == nullptr) return arg_error("null output pointer");
    const ale::ALEScreen& screen = ale->getScreen();
    const std::size_t n = screen.arraySize();
    if (capacity < n) return arg_error("screen buffer too small");
    std::memcpy(out, screen.getArray(), n);
    return CP_ALE_OK;
  });
}

int cp_ale_ram(ale::ALEInterface* ale, std::uint8_t* out, std::size_t capacity) noexcept {
  return with_rom(ale, [&]() -> int {
    if (out == nullptr) return arg_error("null output pointer");
    const ale::ALERAM& ram = ale->getRAM();
    if (capacity < ram.size()) return arg_error("RAM buffer too small");
    std::memcpy(out, ram.array(), ram.size());
    return CP_ALE_OK;
  });
}

int cp_ale_legal_actions(ale::ALEInterface* ale, int* out, std::size_t capacity,
                         std::size_t* count) noexcept {
  return query_values(ale, out, capacity, count, [&] { return ale->getLegalActionSet(); });
}

int cp_ale_minimal_actions(ale::ALEInterface* ale, int* out, std::size_t capacity,
                           std::size_t* count) noexcept {
  return query_values(ale, out, capacity, count, [&] { return ale->getMinimalActionSet(); });
}

// ALE keeps the actions a sticky step repeats (StellaEnvironment's m_player_a_action,
// m_player_b_action and the paddle strengths) outside ALEState, so cloneState alone would
// restore an env that repeats the wrong action at its next sticky frame. The members are
// private with no accessor; an explicit template instantiation may name private members
// (C++17 [temp.explicit]/14), which is how the shim reads and writes them. The build pins
// ALE 0.12.1, whose header declares them.
namespace {
template <class Tag, typename Tag::type Member>
struct Expose {
  friend typename Tag::type member_of(Tag) { return Member; }
};
struct ActionA { using type = ale::Action ale::StellaEnvironment::*; friend type member_of(ActionA); };
struct ActionB { using type = ale::Action ale::StellaEnvironment::*; friend type member_of(ActionB); };
struct StrengthA { using type = float ale::StellaEnvironment::*; friend type member_of(StrengthA); };
struct StrengthB { using type = float ale::StellaEnvironment::*; friend type member_of(StrengthB); };
template struct Expose<ActionA, &ale::StellaEnvironment::m_player_a_action>;
template struct Expose<ActionB, &ale::StellaEnvironment::m_player_b_action>;
template struct Expose<StrengthA, &ale::StellaEnvironment::m_paddle_a_strength>;
template struct Expose<StrengthB, &ale::StellaEnvironment::m_paddle_b_strength>;

// Appended to ALE's serialized state.
struct StickyActions {
  std::int32_t a, b;
  float strength_a, strength_b;
};
}  // namespace

int cp_ale_save_state(ale::ALEInterface* ale, char** out, std::size_t* size) noexcept {
  if (out == nullptr || size == nullptr) return arg_error("null output pointer");
  *out = nullptr;
  *size = 0;
  return with_rom(ale, [&]() -> int {
    const std::string state = ale->cloneState(true).serialize();
    ale::StellaEnvironment& env = *ale->environment;
    const StickyActions sticky{static_cast<std::int32_t>(env.*member_of(ActionA())),
                               static_cast<std::int32_t>(env.*member_of(ActionB())),
                               env.*member_of(StrengthA()), env.*member_of(StrengthB())};
    char* buf = static_cast<char*>(std::malloc(state.size() + sizeof sticky));
    if (buf == nullptr) throw std::bad_alloc();
    std::memcpy(buf, state.data(), state.size());
    std::memcpy(buf + state.size(), &sticky, sizeof sticky);
    *out = buf;
    *size = state.size() + sizeof sticky;
    return CP_ALE_OK;
  });
}

int cp_ale_load_state(ale::ALEInterface* ale, const char* data, std::size_t size) noexcept {
  return with_rom(ale, [&]() -> int {
    StickyActions sticky;
    if (data == nullptr || size < sizeof sticky) return arg_error("not a saved state");
    const std::size_t n = size - sizeof sticky;
    std::memcpy(&sticky, data + n, sizeof sticky);
    if (sticky.a < 0 || sticky.a >= ale::LAST_ACTION_INDEX || sticky.b < 0 ||
        sticky.b >= ale::LAST_ACTION_INDEX)
      return arg_error("not a saved state (action out of range)");
    ale->restoreState(ale::ALEState(std::string(data, n)));
    ale::StellaEnvironment& env = *ale->environment;
    env.*member_of(ActionA()) = static_cast<ale::Action>(sticky.a);
    env.*member_of(ActionB()) = static_cast<ale::Action>(sticky.b);
    env.*member_of(StrengthA()) = sticky.strength_a;
    env.*member_of(StrengthB()) = sticky.strength_b;
    return CP_ALE_OK;
  });
}
