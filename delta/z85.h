/* Z85 (ZeroMQ RFC 32), the Base85 variant the Delta log uses for deletion
 * vectors: every 5 characters of the alphabet carry one 4-byte big-endian
 * group. Decoding only (sievefs never writes a log); pure. */
#ifndef SIEVE_Z85_H
#define SIEVE_Z85_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The bytes encoded_len characters decode to, encoded_len / 5 * 4; 0 when
 * encoded_len is not a multiple of 5 (check that before trusting a 0). */
size_t z85_decoded_size(size_t encoded_len);

/* Decode len characters of in (no NUL needed) into out, which holds
 * z85_decoded_size(len) bytes. False, with out partly written, when len is
 * not a multiple of 5, a character is outside the alphabet, or a group's
 * value exceeds 2^32 - 1 (no encoder writes one). */
bool z85_decode(const char *in, size_t len, uint8_t *out);

#endif
