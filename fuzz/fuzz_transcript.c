/* Fuzz target: the transcript decoder and encoder. Any bytes: decoding must
 * not crash and errors must carry a message; accepted transcripts must encode
 * to a fixed point and render for Anthropic. */
#include "core/transcript.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    quire_transcript *t = NULL;
    quire_error e;
    quire_options o = QUIRE_OPTIONS_INIT;
    o.limits.max_depth = 64;
    if (quire_transcript_parse((const char *)data, size, &o, &t, &e) != QUIRE_OK) {
        if (!e.message[0] || t) abort();
        return 0;
    }
    quire_bytes b1 = {0}, b2 = {0};
    if (quire_transcript_write(t, 0, &b1, &e) != QUIRE_OK) abort();
    quire_transcript *t2 = NULL;
    if (quire_transcript_parse(b1.data, b1.len, &o, &t2, &e) != QUIRE_OK) abort();
    if (quire_transcript_write(t2, 0, &b2, &e) != QUIRE_OK) abort();
    if (b1.len != b2.len || memcmp(b1.data, b2.data, b1.len) != 0) abort();
    quire_render_options ro = QUIRE_RENDER_OPTIONS_INIT;
    ro.provider = "anthropic";
    quire_render_result res;
    if (quire_render(t, NULL, &ro, &o, &res, &e) == QUIRE_OK) quire_render_result_free(&res);
    quire_bytes_free(&b1);
    quire_bytes_free(&b2);
    quire_transcript_free(t2);
    quire_transcript_free(t);
    return 0;
}
