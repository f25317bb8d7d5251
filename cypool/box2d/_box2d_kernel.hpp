// What the Box2D kernels (_lunar_lander.hpp, _bipedal_walker.hpp, _car_racing.hpp) share: the
// random draws they make from their env's numpy stream, and the rule that no C++ exception
// leaves a kernel.
#pragma once
#include <Box2D/Box2D.h>
#include <cstdint>
#include <cstdio>
#include <new>

namespace cyb2 {

// An env's numpy stream, as gymnasium's Generator calls draw from it (filled by
// cypool/box2d/_draws.pxd from numpy's C distributions)
struct Draws {
    void* state;
    double (*uniform)(void* state, double low, double high);      // uniform(low, high)
    double (*random)(void* state);                                // random()
    int64_t (*integers)(void* state, int64_t low, int64_t high);  // integers(low, high)
};

// body() with every C++ exception caught: a failed Box2D assertion (pybox2d's AssertionError),
// running out of memory or any other exception gives `error` and a message naming `what`
// ("reset", "step") in err. Returns body()'s status otherwise.
template <class Body>
inline int guarded(const char* what, int error, char* err, size_t errlen, Body&& body) {
    try {
        return body();
    } catch (const b2AssertException& exc) {
        snprintf(err, errlen, "Box2D assertion failed in %s: %s", what, exc.expression);
    } catch (const std::bad_alloc&) {
        snprintf(err, errlen, "out of memory in Box2D %s", what);
    } catch (...) {
        snprintf(err, errlen, "unexpected C++ exception in Box2D %s", what);
    }
    return error;
}

}  // namespace cyb2
