#include "sv_grow.h"

#include <stdint.h>
#include <stdlib.h>

bool sv_grow(void **arr, size_t *cap, size_t need, size_t elem, size_t first, size_t max)
{
    if (need <= *cap)
        return true;
    if (need > max || elem == 0 || need > SIZE_MAX / elem)
        return false;
    size_t ncap = *cap ? *cap : (first ? first : 1);
    while (ncap < need)
        ncap = ncap > max / 2 ? max : ncap * 2;
    if (ncap > SIZE_MAX / elem)
        ncap = need;
    void *p = realloc(*arr, ncap * elem);
    if (!p)
        return false;
    *arr = p;
    *cap = ncap;
    return true;
}
