/* qgemv/grids.h: the lookup tables of the non-linear formats.
 *
 * kvalues_iq4nl: the 16 levels of iq4_nl / iq4_xs; kvalues_mxfp4: E2M1 values doubled
 * (0, 0.5, 1, 1.5, 2, 3, 4, 6 and negatives, times 2), as ggml-common.h declares them.
 */
#ifndef QGEMV_GRIDS_H
#define QGEMV_GRIDS_H

#include <stdint.h>

static const int8_t kvalues_iq4nl[16] = {
    -127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113,
};

static const int8_t kvalues_mxfp4[16] = {
    0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12,
};

#endif /* QGEMV_GRIDS_H */
