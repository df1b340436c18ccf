#include "b64.h"

#include <stdint.h>
#include <string.h>

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t b64_encoded_len(size_t n) { return (n + 2) / 3 * 4; }

void b64_encode(const void *in, size_t n, char *out)
{
    const uint8_t *p = in;
    size_t i = 0, o = 0;
    for (; i + 3 <= n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
        out[o++] = alphabet[v >> 18];
        out[o++] = alphabet[(v >> 12) & 63];
        out[o++] = alphabet[(v >> 6) & 63];
        out[o++] = alphabet[v & 63];
    }
    if (i < n) {
        uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0);
        out[o++] = alphabet[v >> 18];
        out[o++] = alphabet[(v >> 12) & 63];
        out[o++] = i + 1 < n ? alphabet[(v >> 6) & 63] : '=';
        out[o++] = '=';
    }
    out[o] = '\0';
}

static int value(char c)
{
    const char *p = c ? strchr(alphabet, c) : NULL;
    return p ? (int)(p - alphabet) : -1;
}

long b64_decode(const char *text, void *out)
{
    size_t n = strlen(text);
    if (n % 4)
        return -1;
    uint8_t *o = out;
    long len = 0;
    for (size_t i = 0; i < n; i += 4) {
        int a = value(text[i]), b = value(text[i + 1]);
        int pad = (text[i + 2] == '=') + (text[i + 3] == '=');
        if (pad && i + 4 != n)
            return -1;
        int c = text[i + 2] == '=' ? 0 : value(text[i + 2]);
        int d = text[i + 3] == '=' ? 0 : value(text[i + 3]);
        if (a < 0 || b < 0 || c < 0 || d < 0 || (text[i + 2] == '=' && text[i + 3] != '='))
            return -1;
        uint32_t v = (uint32_t)a << 18 | (uint32_t)b << 12 | (uint32_t)c << 6 | (uint32_t)d;
        o[len++] = (uint8_t)(v >> 16);
        if (pad < 2)
            o[len++] = (uint8_t)(v >> 8);
        if (pad < 1)
            o[len++] = (uint8_t)v;
    }
    return len;
}
