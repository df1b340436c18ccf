/* b64: base64 (RFC 4648), for carrying job output (any bytes) inside JSON messages. */
#ifndef DUCTILE_B64_H
#define DUCTILE_B64_H

#include <stddef.h>

/* Encoded length of n bytes, without the NUL. */
size_t b64_encoded_len(size_t n);
/* Writes the encoding of in[0..n) and a NUL to out (b64_encoded_len(n) + 1 bytes). */
void b64_encode(const void *in, size_t n, char *out);
/* Decodes text into out (at least strlen(text) / 4 * 3 bytes); returns the byte
 * count, or -1 for text that is not base64. */
long b64_decode(const char *text, void *out);

#endif
