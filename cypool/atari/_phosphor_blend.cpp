// cypool's own definition of ALE's ale::PhosphorBlend (colour averaging), for start-up time.
//
// Why this file exists: every ALE emulator (StellaEnvironment) holds a PhosphorBlend, and
// ALE's constructor rebuilds two look-up tables each time: the blended RGB of every pair
// of palette colours (128 x 128) and an RGB -> palette-index map (64 x 64 x 64 entries,
// each the nearest of the 128 colours: 33.5 million distance computations, ~37 ms). That
// was about 3/4 of an Atari env's make + first reset. The tables depend only on the
// colour palette and the blend ratio, so here they are computed once per distinct
// (palette, ratio) in the process, kept in a small cache, and copied into each object.
//
// This implements the class exactly as ALE declares it (ale/environment/phosphor_blend.hpp
// of the pinned sdist), every member, with the same results as ALE's own phosphor_blend.cpp:
// the same blend arithmetic, the same Manhattan distance and the same tie-break (the first
// colour, in palette order, with the smallest distance). buildtools/ale_build.py compiles it
// with ALE's flags for that file and puts it into libale.a in place of ALE's object;
// tests/atari/test_phosphor_blend.py compares colour-averaged screens with ale-py's.
#include "ale/environment/phosphor_blend.hpp"

#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include "ale/emucore/Console.hxx"

namespace ale {

namespace {

constexpr int kColours = 128;  // the even palette entries; odd ones are grayscale

// What the tables depend on: the RGB of each even palette entry, and the blend ratio.
struct TableKey {
  std::array<int, 3 * kColours> rgb;
  int ratio;
  bool operator==(const TableKey& other) const {
    return ratio == other.ratio && rgb == other.rgb;
  }
};

struct Tables {
  TableKey key;
  std::vector<std::uint32_t> avg_palette;  // [256][256], only even x even entries set
  std::vector<std::uint8_t> rgb_ntsc;      // [64][64][64]
};

// A handful of palettes exist (NTSC, PAL, SECAM); beyond this many, tables are built
// without being kept.
constexpr std::size_t kMaxCached = 8;

std::mutex g_cache_mutex;

std::vector<std::unique_ptr<const Tables>>& cache() {
  static auto* entries = new std::vector<std::unique_ptr<const Tables>>();  // never freed
  return *entries;
}

// The RGB -> palette-index map: for each sampled (r, g, b), the even palette index of the
// colour nearest in L1 distance, the first such colour (in palette order) on ties, as
// ALE's scan with a strict < finds it. Distances are at most 765, so they fit int16_t,
// and the two passes below (all distances, then their minimum, then its first position)
// vectorise where ALE's single compare-and-keep loop cannot.
void build_rgb_map(const TableKey& key, std::uint8_t* map) {
  std::int16_t pr[kColours], pg[kColours], pb[kColours], rg[kColours], dist[kColours];
  for (int k = 0; k < kColours; ++k) {
    pr[k] = static_cast<std::int16_t>(key.rgb[3 * k]);
    pg[k] = static_cast<std::int16_t>(key.rgb[3 * k + 1]);
    pb[k] = static_cast<std::int16_t>(key.rgb[3 * k + 2]);
  }
  auto absdiff = [](int a, int b) { return static_cast<std::int16_t>(a > b ? a - b : b - a); };
  for (int r = 0; r < 256; r += 4) {
    for (int g = 0; g < 256; g += 4) {
      for (int k = 0; k < kColours; ++k) {
        rg[k] = static_cast<std::int16_t>(absdiff(pr[k], r) + absdiff(pg[k], g));
      }
      for (int b = 0; b < 256; b += 4) {
        std::int16_t best = 256 * 3 + 1;  // more than any distance, as in ALE
        for (int k = 0; k < kColours; ++k) {
          dist[k] = static_cast<std::int16_t>(rg[k] + absdiff(pb[k], b));
          best = dist[k] < best ? dist[k] : best;
        }
        int first = 0;
        while (dist[first] != best) ++first;  // the first minimum: a later tie never wins
        *map++ = static_cast<std::uint8_t>(2 * first);
      }
    }
  }
}

}  // namespace

PhosphorBlend::PhosphorBlend(stella::OSystem* osystem) : m_osystem(osystem) {
  m_phosphor_blend_ratio = 77;  // Stella's default
  makeAveragePalette();
}

void PhosphorBlend::process(ALEScreen& screen) {
  stella::MediaSource& frames = m_osystem->console().mediaSource();
  const std::uint8_t* current = frames.currentFrameBuffer();
  const std::uint8_t* previous = frames.previousFrameBuffer();
  pixel_t* out = screen.getArray();
  const std::size_t n = screen.arraySize();
  for (std::size_t i = 0; i < n; ++i) {
    out[i] = rgbToNTSC(m_avg_palette[current[i]][previous[i]]);
  }
}

void PhosphorBlend::makeAveragePalette() {
  ColourPalette& palette = m_osystem->colourPalette();
  auto tables = std::make_unique<Tables>();
  TableKey& key = tables->key;
  for (int k = 0; k < kColours; ++k) {
    palette.getRGB(2 * k, key.rgb[3 * k], key.rgb[3 * k + 1], key.rgb[3 * k + 2]);
  }
  key.ratio = m_phosphor_blend_ratio;

  std::lock_guard<std::mutex> lock(g_cache_mutex);
  const Tables* found = nullptr;
  for (const auto& entry : cache()) {
    if (entry->key == key) {
      found = entry.get();
      break;
    }
  }
  if (found == nullptr) {
    // Built under the lock: envs constructed at once on several threads wait for one
    // build instead of each doing its own.
    tables->avg_palette.assign(256 * 256, 0);
    for (int i = 0; i < kColours; ++i) {
      for (int j = 0; j < kColours; ++j) {
        const int* a = &key.rgb[3 * i];
        const int* b = &key.rgb[3 * j];
        // getRGB's ints pass through getPhosphor's uint8_t parameters, as in ALE.
        tables->avg_palette[(2 * i) * 256 + 2 * j] =
            makeRGB(getPhosphor(static_cast<std::uint8_t>(a[0]), static_cast<std::uint8_t>(b[0])),
                    getPhosphor(static_cast<std::uint8_t>(a[1]), static_cast<std::uint8_t>(b[1])),
                    getPhosphor(static_cast<std::uint8_t>(a[2]), static_cast<std::uint8_t>(b[2])));
      }
    }
    // ALE samples RGB space at every 4th value (the low two bits are dropped).
    tables->rgb_ntsc.resize(64 * 64 * 64);
    build_rgb_map(key, tables->rgb_ntsc.data());
    found = tables.get();
    if (cache().size() < kMaxCached) {
      cache().push_back(std::move(tables));
    }
  }
  static_assert(sizeof(m_avg_palette) == 256 * 256 * sizeof(std::uint32_t), "ALE's layout");
  static_assert(sizeof(m_rgb_ntsc) == 64 * 64 * 64, "ALE's layout");
  std::memcpy(m_avg_palette, found->avg_palette.data(), sizeof(m_avg_palette));
  std::memcpy(m_rgb_ntsc, found->rgb_ntsc.data(), sizeof(m_rgb_ntsc));
  // found is tables.get() when the cache was full: tables still owns it here.
}

uint8_t PhosphorBlend::getPhosphor(uint8_t v1, uint8_t v2) {
  int hi = v1 > v2 ? v1 : v2;
  int lo = v1 > v2 ? v2 : v1;
  std::uint32_t blended = ((hi - lo) * m_phosphor_blend_ratio) / 100 + lo;
  return blended > 255 ? 255 : static_cast<uint8_t>(blended);
}

uint32_t PhosphorBlend::makeRGB(uint8_t r, uint8_t g, uint8_t b) {
  return (static_cast<uint32_t>(r) << 16) | (static_cast<uint32_t>(g) << 8) | b;
}

uint8_t PhosphorBlend::rgbToNTSC(uint32_t rgb) {
  return m_rgb_ntsc[(rgb >> 16 & 0xFF) >> 2][(rgb >> 8 & 0xFF) >> 2][(rgb & 0xFF) >> 2];
}

}  // namespace ale
