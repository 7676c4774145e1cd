/* Z85 decoding; see z85.h. */
#include "z85.h"

/* The inverse of RFC 32's alphabet (digits 0..84: 0-9, a-z, A-Z, then
 * . - : + = ^ ! / * ? & < > ( ) [ ] { } @ % $ #) for ASCII 0x20..0x7f: a
 * character's digit + 1, 0 for characters outside the alphabet. */
static const uint8_t DIGIT_PLUS_ONE[96] = {
    0,  69, 0,  85, 84, 83, 73, 0,  76, 77, 71, 66, 0,  64, 63, 70, /* ' ' .. '/' */
    1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 65, 0,  74, 67, 75, 72, /* '0' .. '?' */
    82, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, /* '@' .. 'O' */
    52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 78, 0,  79, 68, 0,  /* 'P' .. '_' */
    0,  11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, /* '`' .. 'o' */
    26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 80, 0,  81, 0,  0,  /* 'p' .. DEL */
};

size_t z85_decoded_size(size_t encoded_len)
{
    return encoded_len % 5 == 0 ? encoded_len / 5 * 4 : 0;
}

bool z85_decode(const char *in, size_t len, uint8_t *out)
{
    if (len % 5 != 0)
        return false;
    for (size_t i = 0; i < len; i += 5) {
        uint64_t value = 0;
        for (size_t j = 0; j < 5; j++) {
            const unsigned char c = (unsigned char)in[i + j];
            if (c < 0x20 || c > 0x7f || DIGIT_PLUS_ONE[c - 0x20] == 0)
                return false;
            value = value * 85 + (uint64_t)(DIGIT_PLUS_ONE[c - 0x20] - 1);
        }
        if (value > UINT32_MAX)
            return false;
        for (int j = 0; j < 4; j++)
            *out++ = (uint8_t)(value >> (24 - 8 * j));
    }
    return true;
}
