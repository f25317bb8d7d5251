# Declarations for the part of ALE's C++ API (ale/ale_interface.hpp, namespace
# ale) that cypool uses.  Compiled against the core that buildtools/ale_build.py
# builds from the ale-py 0.12.1 sdist; needs C++17.
#
# Every method that can throw is `except +`: call those with the GIL held (object
# set-up, settings, reading action sets).  Inside nogil kernels call the noexcept
# cp_ale_* functions of cypool/atari/_ale_shim.hpp instead, which catch everything.
#
# Caution: ALEInterface.loadROM calls std::exit, killing the interpreter, when the
# file is missing or not a supported game, and the game methods (act, reset_game,
# lives, getScreen, ...) dereference a null pointer before a ROM is loaded.  Load
# ROMs through cp_ale_load_rom, which checks the file first.

from libcpp cimport bool as cbool
from libcpp.string cimport string
from libcpp.vector cimport vector


cdef extern from "ale/ale_interface.hpp" namespace "ale" nogil:
    # Joystick inputs of player A.  ALE's enum goes on with player B's inputs
    # (18-35) and console switches, which single-player games never use.
    cdef enum Action:
        PLAYER_A_NOOP
        PLAYER_A_FIRE
        PLAYER_A_UP
        PLAYER_A_RIGHT
        PLAYER_A_LEFT
        PLAYER_A_DOWN
        PLAYER_A_UPRIGHT
        PLAYER_A_UPLEFT
        PLAYER_A_DOWNRIGHT
        PLAYER_A_DOWNLEFT
        PLAYER_A_UPFIRE
        PLAYER_A_RIGHTFIRE
        PLAYER_A_LEFTFIRE
        PLAYER_A_DOWNFIRE
        PLAYER_A_UPRIGHTFIRE
        PLAYER_A_UPLEFTFIRE
        PLAYER_A_DOWNRIGHTFIRE
        PLAYER_A_DOWNLEFTFIRE

    ctypedef int reward_t
    ctypedef vector[Action] ActionVect
    ctypedef unsigned char pixel_t   # a palette index
    ctypedef unsigned char byte_t

    # The emulator's frame: height x width palette indices, row-major.
    cdef cppclass ALEScreen:
        pixel_t* getArray()
        size_t height()
        size_t width()

    # The console's 128 bytes of RAM.
    cdef cppclass ALERAM:
        const byte_t* array()
        size_t size()

    # One emulator.  Not thread-safe: one instance per env.
    cdef cppclass ALEInterface:
        ALEInterface() except +

        # Settings take effect at the next loadROM.  An unknown key throws.
        int getInt(const string& key) except +
        float getFloat(const string& key) except +
        cbool getBool(const string& key) except +
        string getString(const string& key) except +
        void setInt(const string& key, int value) except +
        void setFloat(const string& key, float value) except +
        void setBool(const string& key, cbool value) except +
        void setString(const string& key, const string& value) except +

        # See the caution at the top of this file.
        void loadROM(string rom_file) except +
        void reset_game() except +

        # One step (frame_skip frames); paddle_strength matters for paddle games.
        reward_t act(Action action, float paddle_strength) except +
        # with_truncation also counts max_num_frames_per_episode.
        cbool game_over(cbool with_truncation) except +
        cbool game_truncated() except +
        int lives() except +
        int getFrameNumber() except +
        int getEpisodeFrameNumber() except +

        ActionVect getLegalActionSet() except +
        ActionVect getMinimalActionSet() except +

        const ALEScreen& getScreen() except +
        const ALERAM& getRAM() except +


# What ALE prints to stderr; process-wide (ale::Logger::setMode).
cdef extern from "ale/common/Log.hpp" nogil:
    cdef enum LoggerMode "ale::Logger::mode":
        LOGGER_INFO "ale::Logger::Info"
        LOGGER_WARNING "ale::Logger::Warning"
        LOGGER_ERROR "ale::Logger::Error"

    void logger_set_mode "ale::Logger::setMode"(LoggerMode mode)
