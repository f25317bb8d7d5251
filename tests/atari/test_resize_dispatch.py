"""OpenCV's resize (behind gymnasium's AtariPreprocessing) gives the same bits on every code path
it can take on this CPU: its baseline SIMD, its run-time dispatched AVX2/AVX-512 kernels
(cv2.setUseOptimized) and Intel IPP (cv2.ipp.setUseIPP). cypool's own resize is checked
against OpenCV's default path by test_atari_exactness.py, so together they cover every path.
"""
import numpy as np
import pytest

cv2 = pytest.importorskip("cv2", reason="OpenCV is the reference being checked")

from atari_helpers import resize_area  # noqa: E402

# (source, destination) sizes of the plans the Atari family builds: the default 84x84, the
# integer-scale block paths (2x2, 5x5 after cropping to 210x160 -> 105x80, 42x32), and growth
SIZES = [((210, 160), (84, 84)), ((210, 160), (105, 80)), ((210, 160), (42, 32)),
         ((210, 160), (250, 200)), ((210, 160), (64, 96))]


@pytest.fixture
def restore_cv2():
    opt, ipp = cv2.useOptimized(), cv2.ipp.useIPP()
    yield
    cv2.setUseOptimized(opt)
    cv2.ipp.setUseIPP(ipp)


@pytest.mark.parametrize("inter", ["area", "linear"])
@pytest.mark.parametrize("src,dst", SIZES)
@pytest.mark.parametrize("channels", [1, 3])
def test_cv2_resize_same_on_every_path(restore_cv2, inter, src, dst, channels):
    flag = cv2.INTER_AREA if inter == "area" else cv2.INTER_LINEAR
    rng = np.random.default_rng(hash((inter, src, dst, channels)) % 2**32)
    shape = src if channels == 1 else src + (channels,)
    for img in (rng.integers(0, 256, shape, dtype=np.uint8),
                np.full(shape, 255, np.uint8), (np.indices(shape).sum(0) % 256).astype(np.uint8)):
        outs = {}
        for opt in (True, False):
            for ipp in (True, False):
                cv2.setUseOptimized(opt)
                cv2.ipp.setUseIPP(ipp)
                outs[(opt, ipp)] = cv2.resize(img, dst[::-1], interpolation=flag)
        first = outs[(True, True)]
        for key, out in outs.items():
            assert np.array_equal(out, first), f"optimized, ipp = {key}"
        if inter == "area" and channels == 1 and dst[0] <= src[0] and dst[1] <= src[1]:
            assert np.array_equal(resize_area(img, *dst), first)
