/* The render memo (render/memo.c) through the session engine: every render
 * of a generated log (hundreds of turns, reminders, a compaction, input cache
 * markers) equals the stateless quire_render of the same transcript and state,
 * for each dialect with a memo path; a steady turn encodes only a few units;
 * the storage is compacted (slack 0) without changing a byte; the running
 * digest of --digest equals quire_digest128 of the body; a later turn looks
 * at a few units only, however long the history (the reused prefix), its
 * body shares its leading pieces with the body before and the body in one
 * buffer is written from the first byte that changed. */
#define _GNU_SOURCE /* memmem */
#include "render/memo.h"
#include "session/engine.h"
#include "quire.h"
#include "unit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct sbuf {
    char *p;
    size_t n, cap;
} sbuf;

static void put(sbuf *b, const char *s) {
    size_t k = strlen(s);
    if (b->n + k + 1 > b->cap) {
        b->cap = (b->n + k + 1) * 2;
        b->p = realloc(b->p, b->cap);
    }
    memcpy(b->p + b->n, s, k + 1);
    b->n += k;
}

/* A session log: turns of user text (some with an input cache marker), a
 * render, an assistant answer with a tool call and its result; a reminder
 * every 7 turns; a compaction after turn `compact_at`. */
static char *make_log(int turns, int compact_at, bool extras, size_t *len) {
    sbuf b = {0};
    char line[1024];
    put(&b, "{\"type\":\"session\",\"sessionId\":\"memo\",\"target\":{\"provider\":\"anthropic\",\"model\":\"claude-sonnet-4-5\"},"
            "\"system\":\"You are a careful agent.\",\"tools\":[{\"name\":\"read\",\"inputSchema\":{\"type\":\"object\"}}]}\n");
    for (int t = 1; t <= turns; t++) {
        if (t % 11 == 0)
            snprintf(line, sizeof line,
                     "{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"turn %d\","
                     "\"cacheControl\":{\"type\":\"ephemeral\"}}]}}\n", t);
        else
            snprintf(line, sizeof line, "{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"turn %d: go on\"}}\n", t);
        put(&b, line);
        if (t % 7 == 0) {
            snprintf(line, sizeof line, "{\"type\":\"reminder\",\"reminder\":{\"body\":\"note %d\",\"ttlTurns\":2}}\n", t);
            put(&b, line);
        }
        put(&b, "{\"type\":\"render\"}\n");
        snprintf(line, sizeof line,
                 "{\"type\":\"message\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"reading %d\"},"
                 "{\"type\":\"toolCall\",\"id\":\"c%d\",\"name\":\"read\",\"input\":{\"path\":\"f%d\"}}]}}\n", t, t, t);
        put(&b, line);
        if (extras && t % 23 == 0) /* a blank text part the rules take out of a tool result (Anthropic) */
            snprintf(line, sizeof line,
                     "{\"type\":\"message\",\"message\":{\"role\":\"tool\",\"content\":[{\"type\":\"toolResult\",\"toolCallId\":\"c%d\","
                     "\"content\":[{\"type\":\"text\",\"text\":\" \"},{\"type\":\"text\",\"text\":\"contents of f%d\"}]}]}}\n", t, t);
        else
            snprintf(line, sizeof line,
                     "{\"type\":\"message\",\"message\":{\"role\":\"tool\",\"content\":[{\"type\":\"toolResult\",\"toolCallId\":\"c%d\","
                     "\"content\":\"contents of f%d\"}]}}\n", t, t);
        put(&b, line);
        if (extras && t % 13 == 0) {
            /* a system message in the middle of the conversation */
            snprintf(line, sizeof line, "{\"type\":\"message\",\"message\":{\"role\":\"system\",\"content\":\"rule %d\"}}\n", t);
            put(&b, line);
        }
        if (extras && t % 19 == 0) {
            /* an image with a detail level: only OpenAI's dialects carry it */
            snprintf(line, sizeof line,
                     "{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"see %d\"},"
                     "{\"type\":\"image\",\"url\":\"https://example.com/%d.png\",\"detail\":\"original\"}]}}\n", t, t);
            put(&b, line);
        }
        if (extras && t % 17 == 0) {
            /* blocks the provider rules drop on some targets: blank text, unsigned thinking */
            snprintf(line, sizeof line,
                     "{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"  \"},"
                     "{\"type\":\"text\",\"text\":\"also %d\"}]}}\n", t);
            put(&b, line);
            put(&b, "{\"type\":\"render\"}\n");
            snprintf(line, sizeof line,
                     "{\"type\":\"message\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"thinking\",\"text\":\"hm\"},"
                     "{\"type\":\"text\",\"text\":\"noted %d\"}]}}\n", t);
            put(&b, line);
        }
        if (t == compact_at)
            put(&b, "{\"type\":\"compact\",\"policy\":{\"keepFirstTurns\":0,\"keepLastTurns\":3},\"summary\":\"Earlier: reads.\"}\n");
    }
    *len = b.n;
    return b.p;
}

/* extras: the log has mid-conversation system messages, images with a
 * detail level and blocks the provider rules or the encoders drop (with
 * events, on every turn); with a digest, the run uses append_only placement
 * (reminder blocks stay in the history and their units are encoded every
 * turn: costs are not checked) */
static void run(const char *log, size_t len, const char *provider, const char *model, bool digest, size_t slack,
                bool extras) {
    quire_replay_options ro = QUIRE_REPLAY_OPTIONS_INIT;
    ro.provider = provider;
    ro.model = model;
    /* extras with a digest: reminders stay in the history where they were
     * (append_only), so stored units after them are looked at one by one */
    quire_render_options over = QUIRE_RENDER_OPTIONS_INIT;
    if (extras && digest) {
        over.placement = QUIRE_PLACEMENT_APPEND_ONLY;
        ro.render = &over;
    }
    ro.flags = digest ? QUIRE_REPLAY_DIGEST : 0u;
    quire_replay *r = NULL;
    quire_error err;
    CHECK_INT(quire_replay_open(log, len, &ro, NULL, &r, &err), QUIRE_OK);
    if (!r) return;
    r->memo = qr_memo_new(r->a);
    qr_memo_set_slack(r->memo, slack);
    int renders = 0, checked = 0, steady = 0, small = 0, prefixed = 0, few = 0, tail_small = 0, tail_turns = 0, evturns = 0;
    size_t written_units = 0;
    uint32_t max_visited = 0, max_units = 0;
    uint64_t epoch0 = qr_memo_epoch(r->memo);
    for (;;) {
        quire_state *before = qs_clone(r->state);
        quire_replay_step step;
        int done = 0;
        quire_status st = quire_replay_next(r, &step, &done, &err);
        CHECK_MSG(st == QUIRE_OK, "%s: line %u: %s", provider, err.line, err.message);
        if (st || done) { quire_state_free(before); break; }
        if (step.turn) {
            renders++;
            /* the stateless render of the same transcript and state */
            quire_render_options rop = QUIRE_RENDER_OPTIONS_INIT;
            rop.provider = provider;
            rop.model = model;
            rop.placement = over.placement;
            quire_render_result res;
            CHECK_INT(quire_render(r->t, before, &rop, NULL, &res, &err), QUIRE_OK);
            size_t np, blen;
            const qr_piece *pc = qr_memo_pieces(r->memo, &np, &blen);
            size_t nseg;
            const quire_segment *sg = qr_memo_segments(r->memo, &nseg);
            char *body = malloc(blen + 1), *q = body;
            for (size_t k = 0; k < nseg; k++) { memcpy(q, sg[k].data, sg[k].len); q += sg[k].len; }
            size_t plen = 0;
            for (size_t k = 0; k < np; k++) plen += pc[k].n;
            CHECK(plen == blen && (size_t)(q - body) == blen);
            CHECK_MSG(res.request.len == blen && memcmp(res.request.data, body, blen) == 0,
                      "%s turn %lld: the memo body differs from the stateless render", provider, (long long)step.turn);
            if (digest) {
                char hex[33];
                quire_digest128(res.request.data, res.request.len, hex);
                CHECK_MSG(strstr(step.output, hex) != NULL, "%s turn %lld: running digest differs", provider,
                          (long long)step.turn);
                CHECK(step.request == NULL && step.request_len == blen);
            } else {
                CHECK(step.request && step.request_len == blen && memcmp(step.request, body, blen) == 0);
                /* the body in one buffer: only what follows the first changed byte is written */
                if (step.turn > 20 && blen > 20000) tail_small += r->flat_written * 4 <= blen;
                if (step.turn > 20 && blen > 20000) tail_turns++;
            }
            /* the same events, as the stream's event lines after the request */
            sbuf want = {0};
            put(&want, "");
            for (const char *e = res.events.data, *end = e ? e + res.events.len : NULL; e && e < end;) {
                const char *nl = memchr(e, '\n', (size_t)(end - e));
                size_t n = nl ? (size_t)(nl - e) : (size_t)(end - e);
                if (n) {
                    put(&want, "{\"type\":\"event\",\"event\":");
                    char *l = malloc(n + 1);
                    memcpy(l, e, n);
                    l[n] = '\0';
                    put(&want, l);
                    free(l);
                    put(&want, "}\n");
                }
                e = nl ? nl + 1 : end;
            }
            const char *req_end = step.output ? strchr(step.output, '\n') : NULL;
            CHECK_MSG(req_end && strncmp(req_end + 1, want.p, want.n) == 0, "%s turn %lld: the events differ from the stateless "
                      "render's", provider, (long long)step.turn);
            evturns += strstr(want.p, "content_dropped") != NULL;
            free(want.p);
            checked++;
            /* the validation window holds every unit this render encoded
             * (after the compaction: all of them), not only what sits next
             * to the tail or a breakpoint */
            {
                const char *win = NULL;
                size_t wl = 0;
                if (qr_memo_window(r->memo, &win, &wl)) {
                    for (size_t k = 0; k < np; k++) {
                        if (!pc[k].written) continue;
                        written_units++;
                        bool found = memmem(win, wl, pc[k].p, pc[k].n) != NULL;
                        CHECK_MSG(found, "%s turn %lld: a unit encoded this turn (piece %zu) is not in the validation "
                                  "window", provider, (long long)step.turn, k);
                        if (!found) break;
                    }
                }
            }
            uint32_t reused, encoded;
            qr_memo_counts(r->memo, &reused, &encoded);
            if (step.turn > 20) {
                steady++;
                small += encoded <= 4 && reused >= 10;
                /* units looked at one by one: the new ones and their
                 * neighbours, not the history */
                uint32_t v = qr_memo_visited(r->memo);
                if (v > max_visited) max_visited = v;
                few += v <= 8;
                if (reused + encoded > max_units) max_units = reused + encoded;
                size_t sbytes = 0, same = qr_memo_same(r->memo, NULL, &sbytes);
                CHECK(same <= np && sbytes <= blen);
                prefixed += same > 10;
            }
            free(body);
            quire_render_result_free(&res);
        }
        quire_state_free(before);
    }
    printf("%s%s%s slack %zu: %d renders checked, %d of %d later turns encoded <= 4 units, storage epochs %llu\n", provider,
           digest ? " (digest)" : "", extras ? " (extras)" : "", slack, checked, small, steady,
           (unsigned long long)(qr_memo_epoch(r->memo) - epoch0));
    CHECK(checked == renders && renders >= 200);
    if (extras) {
        /* the dropped blocks are reported on every turn, stored units or not */
        printf("  events checked; %d turns report dropped content\n", evturns);
        CHECK(evturns > 150);
        if (digest) { /* append_only: reminder blocks stay in the history, encoded every turn */
            quire_replay_free(r);
            return;
        }
    }
    /* validation on a window of the body, not the whole body, once it is long */
    printf("  validated on a window: %u, in full: %u; %zu units encoded in a windowed turn, each in its window\n",
           r->nwindow, r->nfull, written_units);
    CHECK(written_units > 0);
    CHECK(r->nwindow > 200 && r->nfull < 40);
    /* a turn costs what changed: nearly every later turn reuses its history */
    CHECK_MSG(small * 10 >= steady * 9, "%s: %d of %d turns encoded few units", provider, small, steady);
    printf("  units per body up to %u, looked at one by one up to %u (<= 8 in %d of %d later turns); %d kept the last body's "
           "start\n", max_units, max_visited, few, steady, prefixed);
    if (slack) {
        /* the reused prefix: a later turn visits the units from the first
         * that can have changed (new messages, here and there an input cache
         * marker 11 turns back that the newer one drops), not the history */
        CHECK_MSG(max_units >= 200 && max_visited <= 30, "%s: a later turn visited %u units of %u", provider, max_visited,
                  max_units);
        CHECK_MSG(few * 10 >= steady * 9, "%s: %d of %d later turns visited <= 8 units", provider, few, steady);
        if (!digest) {
            printf("  contiguous body: %d of %d later turns wrote <= a quarter of it\n", tail_small, tail_turns);
            CHECK_MSG(tail_turns > 50 && tail_small * 10 >= tail_turns * 9, "%s: %d of %d contiguous bodies wrote <= a quarter",
                      provider, tail_small, tail_turns);
        }
        CHECK_MSG(prefixed * 10 >= steady * 8, "%s: %d of %d later bodies reused the last one's start", provider,
                  prefixed, steady);
    }
    /* anthropic's moving breakpoint re-encodes a unit every turn: with slack 0
     * its storage is compacted again and again (epochs), bytes unchanged */
    if (slack == 0 && strcmp(provider, "anthropic") == 0) CHECK(qr_memo_epoch(r->memo) - epoch0 > 100);
    quire_replay_free(r);
}

/* The anthropic-beta features a stored unit needed (a mid-conversation
 * system message, a one-hour cache marker) are in the headers of every later
 * turn, as in the stateless render's envelope. */
static void beta_headers(void) {
    const char *cfg = "{\"sessionId\":\"b\",\"target\":{\"provider\":\"anthropic\",\"model\":\"claude-opus-4-8\"},"
                      "\"system\":\"S\"}";
    quire_session *s = NULL;
    quire_error err;
    CHECK_INT(quire_session_open(cfg, strlen(cfg), NULL, NULL, &s, &err), QUIRE_OK);
    if (!s) return;
    const char *first[] = {
        "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"hi\",\"cacheControl\":{\"type\":\"ephemeral\",\"ttl\":\"1h\"}}]}",
        "{\"role\":\"system\",\"content\":\"be brief\"}", "{\"role\":\"assistant\",\"content\":\"yo\"}",
        "{\"role\":\"user\",\"content\":\"more\"}"};
    for (size_t k = 0; k < sizeof first / sizeof *first; k++)
        CHECK_INT(quire_session_append(s, first[k], strlen(first[k]), &err), QUIRE_OK);
    int both = 0;
    for (int turn = 0; turn < 12; turn++) {
        quire_session_turn t;
        CHECK_INT(quire_session_render(s, NULL, 0, NULL, 0, 0, &t, &err), QUIRE_OK);
        quire_bytes tj, sj;
        CHECK_INT(quire_session_transcript(s, 0, &tj, &err), QUIRE_OK);
        CHECK_INT(quire_session_state(s, 0, &sj, &err), QUIRE_OK);
        quire_transcript *tr = NULL;
        quire_state *st = NULL;
        CHECK_INT(quire_transcript_parse(tj.data, tj.len, NULL, &tr, &err), QUIRE_OK);
        CHECK_INT(quire_state_parse(sj.data, sj.len, NULL, &st, &err), QUIRE_OK);
        quire_render_options ro = QUIRE_RENDER_OPTIONS_INIT;
        ro.provider = "anthropic";
        ro.model = "claude-opus-4-8";
        quire_render_result res;
        CHECK_INT(quire_render(tr, st, &ro, NULL, &res, &err), QUIRE_OK);
        char *h = malloc(t.headers_len + 1);
        memcpy(h, t.headers, t.headers_len);
        h[t.headers_len] = '\0';
        CHECK_MSG(res.envelope.data && strstr(res.envelope.data, h) != NULL, "turn %d: headers %s, stateless envelope %s",
                  turn, h, res.envelope.data ? res.envelope.data : "");
        both += strstr(h, "mid-conversation-system") && strstr(h, "extended-cache-ttl");
        free(h);
        quire_render_result_free(&res);
        quire_transcript_free(tr);
        quire_state_free(st);
        quire_bytes_free(&tj);
        quire_bytes_free(&sj);
        const char *a = "{\"role\":\"assistant\",\"content\":\"ok\"}";
        CHECK_INT(quire_session_accept_message(s, a, strlen(a), &err), QUIRE_OK);
        const char *u = "{\"role\":\"user\",\"content\":\"again\"}";
        CHECK_INT(quire_session_append(s, u, strlen(u), &err), QUIRE_OK);
    }
    printf("beta headers: %d of 12 turns name both features\n", both);
    CHECK(both == 12);
    quire_session_free(s);
}


/* ---- stale keys: a stored unit's key names messages by the address of
 * their blocks (memo.c, qr_memo_stable). The provider rules rewrite some
 * messages into the render's scratch, freed when the render ends; an
 * allocator that hands freed blocks back at once (the last freed that fits,
 * a random one, or one a few frees back) lets a later render find other
 * bytes at such an address. Every render must still equal the stateless
 * render of the same transcript. ---- */

typedef struct rblk {
    void *p;
    size_t n;
} rblk;
static rblk g_freed[8192];
static size_t g_nfreed, g_handed_back;

static size_t g_skip; /* with g_pick: the fitting block this far back from the last freed */
static uint64_t g_pick; /* 0: the last freed block that fits; else a random one of those (a seed) */
static void *rc_malloc(size_t n, void *ud) {
    (void)ud;
    size_t fit = 0, want = 0;
    if (g_pick) {
        for (size_t k = 0; k < g_nfreed; k++) fit += g_freed[k].n >= n && g_freed[k].n <= n * 4 + 64;
        g_pick = g_pick * 6364136223846793005ull + 1442695040888963407ull;
        want = fit ? (size_t)((g_pick >> 33) % fit) : 0;
        if (g_skip) want = fit > g_skip ? g_skip : 0;
    }
    for (size_t k = g_nfreed; k-- > 0;)
        if (g_freed[k].n >= n && g_freed[k].n <= n * 4 + 64 && (!g_pick || want-- == 0)) {
            void *p = g_freed[k].p;
            memset(p, 0xA5, g_freed[k].n); /* the stale bytes differ from what a stale key expects */
            g_freed[k] = g_freed[--g_nfreed];
            g_handed_back++;
            return p;
        }
    return malloc(n ? n : 1);
}
static void rc_free(void *p, size_t n, void *ud) {
    (void)ud;
    if (!p) return;
    if (g_nfreed == sizeof g_freed / sizeof *g_freed) { free(p); return; }
    /* rblk.n: the size the block was asked with (a malloc'd block holds at least that) */
    g_freed[g_nfreed].p = p;
    g_freed[g_nfreed].n = n;
    g_nfreed++;
}
static void *rc_realloc(void *p, size_t o, size_t n, void *ud) {
    if (!p) return rc_malloc(n, ud);
    if (n == 0) { rc_free(p, o, ud); return NULL; }
    void *q = rc_malloc(n, ud);
    if (!q) return NULL;
    memcpy(q, p, o < n ? o : n);
    rc_free(p, o, ud);
    return q;
}
static void rc_drain(void) {
    while (g_nfreed) free(g_freed[--g_nfreed].p);
}

/* A log whose final assistant message the rules rewrite on one render and
 * not (or otherwise) on the next: trailing whitespace (trimmed only while
 * it is the final message), unsigned thinking and blank text dropped, a
 * tail reminder that turns the trimming off for a render, compactions that
 * replace the transcript, mid-conversation system messages and images with
 * a detail level; a render after every message. */
static char *make_stale_log(int seed, int turns, size_t *len) {
    sbuf b = {0};
    char line[2048];
    uint64_t x = (uint64_t)(uint32_t)seed * 0x9e3779b97f4a7c15ull + 1;
#define RND(n) (x = x * 6364136223846793005ull + 1442695040888963407ull, (uint32_t)((x >> 33) % (n)))
    put(&b, "{\"type\":\"session\",\"sessionId\":\"stale\",\"target\":{\"provider\":\"anthropic\",\"model\":\"claude-sonnet-4-5\"},"
            "\"system\":\"You are terse.\"}\n");
    for (int t = 1; t <= turns; t++) {
        switch (RND(4)) {
        case 0: snprintf(line, sizeof line, "{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"q%d\"}}\n", t); break;
        case 1:
            snprintf(line, sizeof line, "{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\" \"},"
                     "{\"type\":\"text\",\"text\":\"q%d\"}]}}\n", t);
            break;
        case 2:
            snprintf(line, sizeof line, "{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"see %d\"},"
                     "{\"type\":\"image\",\"url\":\"https://example.com/%d.png\",\"detail\":\"original\"}]}}\n", t, t);
            break;
        default:
            snprintf(line, sizeof line, "{\"type\":\"message\",\"message\":{\"role\":\"system\",\"content\":\"rule %d\"}}\n", t);
            put(&b, line);
            snprintf(line, sizeof line, "{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"q%d\"}}\n", t);
        }
        put(&b, line);
        put(&b, "{\"type\":\"render\"}\n");
        /* the answer: its text ends with whitespace, some blocks the rules drop */
        const char *pre = RND(2) ? "{\"type\":\"thinking\",\"text\":\"hm\"}," : "";
        /* blank text, or (more than a scratch chunk holds) a run of text blocks */
        const char *blank = "";
        switch (RND(4)) {
        case 0: blank = "{\"type\":\"text\",\"text\":\"\\n\"},"; break;
        case 1:
            blank = "{\"type\":\"text\",\"text\":\"a\"},{\"type\":\"text\",\"text\":\"b\"},{\"type\":\"text\",\"text\":\"c\"},"
                    "{\"type\":\"text\",\"text\":\"d\"},{\"type\":\"text\",\"text\":\"e\"},{\"type\":\"text\",\"text\":\"f\"},"
                    "{\"type\":\"text\",\"text\":\"g\"},{\"type\":\"text\",\"text\":\"h\"},{\"type\":\"text\",\"text\":\"i\"},"
                    "{\"type\":\"text\",\"text\":\"j\"},{\"type\":\"text\",\"text\":\"k\"},{\"type\":\"text\",\"text\":\"l\"},";
            break;
        default: break;
        }
        static const char *const pads[] = {"", " ", "  ", "\\n", " \\t\\n ", "\\r\\n"};
        const char *pad = pads[RND(6)];
        snprintf(line, sizeof line, "{\"type\":\"message\",\"message\":{\"role\":\"assistant\",\"content\":[%s%s"
                 "{\"type\":\"text\",\"text\":\"answer %d%s\"}]}}\n", pre, blank, t, pad);
        put(&b, line);
        if (RND(3) == 0) {
            snprintf(line, sizeof line, "{\"type\":\"reminder\",\"reminder\":{\"body\":\"note %d\",\"ttlTurns\":1}}\n", t);
            put(&b, line);
        }
        /* the final assistant message, trimmed: rendered once or twice */
        put(&b, "{\"type\":\"render\"}\n");
        if (RND(2)) put(&b, "{\"type\":\"render\"}\n");
        if (RND(4) == 0) {
            /* a second assistant message right after (one wire message with the first) */
            snprintf(line, sizeof line, "{\"type\":\"message\",\"message\":{\"role\":\"assistant\",\"content\":[%s{\"type\":\"text\","
                     "\"text\":\"more %d \"}]}}\n", pre, t);
            put(&b, line);
            put(&b, "{\"type\":\"render\"}\n");
        }
        if (t % 17 == 0)
            put(&b, "{\"type\":\"compact\",\"policy\":{\"keepFirstTurns\":0,\"keepLastTurns\":3},\"summary\":\"Earlier.\"}\n");
    }
#undef RND
    *len = b.n;
    return b.p;
}

static void stale_keys(void) {
    quire_allocator al = {rc_malloc, rc_realloc, rc_free, NULL};
    quire_options opts = QUIRE_OPTIONS_INIT;
    opts.allocator = &al;
    int renders = 0, trimmed = 0;
    size_t handed0 = g_handed_back;
    for (int seed = 1; seed <= 120; seed++) {
        g_pick = seed > 40 ? (uint64_t)seed : 0;
        g_skip = seed > 80 ? (size_t)(seed % 4 + 1) : 0;
        size_t len;
        char *log = make_stale_log(seed, 40, &len);
        quire_replay_options ro = QUIRE_REPLAY_OPTIONS_INIT;
        quire_replay *r = NULL;
        quire_error err;
        CHECK_INT(quire_replay_open(log, len, &ro, &opts, &r, &err), QUIRE_OK);
        if (!r) { free(log); continue; }
        r->memo = qr_memo_new(r->a);
        qr_memo_set_slack(r->memo, seed % 2 ? 0 : (size_t)1 << 20);
        for (;;) {
            quire_state *before = qs_clone(r->state);
            quire_replay_step step;
            int done = 0;
            quire_status st = quire_replay_next(r, &step, &done, &err);
            CHECK_MSG(st == QUIRE_OK, "seed %d: line %u: %s", seed, err.line, err.message);
            if (st || done) { quire_state_free(before); break; }
            if (step.turn) {
                quire_render_options rop = QUIRE_RENDER_OPTIONS_INIT;
                rop.provider = "anthropic";
                rop.model = "claude-sonnet-4-5";
                quire_render_result res;
                CHECK_INT(quire_render(r->t, before, &rop, NULL, &res, &err), QUIRE_OK);
                size_t np, blen;
                qr_memo_pieces(r->memo, &np, &blen);
                CHECK_MSG(step.request && step.request_len == res.request.len &&
                              memcmp(step.request, res.request.data, res.request.len) == 0,
                          "seed %d turn %lld: the memo body differs from the stateless render", seed, (long long)step.turn);
                trimmed += res.events.data && strstr(res.events.data, "trimmed_trailing_whitespace") != NULL;
                renders++;
                quire_render_result_free(&res);
            }
            quire_state_free(before);
        }
        quire_replay_free(r);
        free(log);
    }
    printf("stale keys: %d renders equal to the stateless ones (%d with the final message trimmed), %zu freed blocks "
           "handed back\n", renders, trimmed, g_handed_back - handed0);
    CHECK(renders > 3000 && trimmed > 1000 && g_handed_back - handed0 > 10000);
    rc_drain();
}

/* The input cache markers the memo recorded name blocks of the rules' view
 * of one target: a switch to a target whose rules keep other blocks (the
 * blank text Anthropic drops, OpenAI keeps) must not reuse them. Each
 * render of the log (the target switching back and forth) is compared with
 * the stateless render, events included. */
static void switch_keys(void) {
    static const char log[] =
        "{\"type\":\"session\",\"sessionId\":\"sw\",\"target\":{\"provider\":\"anthropic\",\"model\":\"claude-sonnet-4-5\"},"
        "\"system\":\"Be brief.\"}\n"
        "{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\" \"},"
        "{\"type\":\"text\",\"text\":\"hello\",\"cacheControl\":{\"type\":\"ephemeral\"}}]}}\n"
        "{\"type\":\"message\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"thinking\",\"text\":\"hm\","
        "\"signature\":\"c2ln\",\"provider\":\"gemini\"},{\"type\":\"text\",\"text\":\"ok\"}]}}\n"
        "{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"next\"}}\n"
        "{\"type\":\"render\"}\n"
        "{\"type\":\"render\",\"target\":{\"provider\":\"openai\",\"model\":\"gpt-5.6\"}}\n"
        "{\"type\":\"render\"}\n"
        "{\"type\":\"message\",\"message\":{\"role\":\"assistant\",\"content\":\"sure \"}}\n"
        "{\"type\":\"render\",\"target\":{\"provider\":\"openai\",\"model\":\"gpt-5.6\"}}\n"
        "{\"type\":\"render\"}\n"
        "{\"type\":\"render\",\"target\":{\"provider\":\"openai\",\"model\":\"gpt-5.6\"}}\n"
        "{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"again\"}}\n"
        "{\"type\":\"render\"}\n";
    static const char *const prov[] = {"anthropic", "openai", "anthropic", "openai", "anthropic", "openai", "anthropic"};
    static const char *const model[] = {"claude-sonnet-4-5", "gpt-5.6", "claude-sonnet-4-5", "gpt-5.6", "claude-sonnet-4-5",
                                        "gpt-5.6", "claude-sonnet-4-5"};
    quire_replay_options ro = QUIRE_REPLAY_OPTIONS_INIT;
    quire_replay *r = NULL;
    quire_error err;
    CHECK_INT(quire_replay_open(log, sizeof log - 1, &ro, NULL, &r, &err), QUIRE_OK);
    if (!r) return;
    r->memo = qr_memo_new(r->a);
    int n = 0;
    for (;;) {
        quire_state *before = qs_clone(r->state);
        quire_replay_step step;
        int done = 0;
        quire_status st = quire_replay_next(r, &step, &done, &err);
        CHECK_MSG(st == QUIRE_OK, "line %u: %s", err.line, err.message);
        if (st || done) { quire_state_free(before); break; }
        if (step.turn && n < 7) {
            quire_render_options rop = QUIRE_RENDER_OPTIONS_INIT;
            rop.provider = prov[n];
            rop.model = model[n];
            quire_render_result res;
            CHECK_INT(quire_render(r->t, before, &rop, NULL, &res, &err), QUIRE_OK);
            CHECK_MSG(step.request && step.request_len == res.request.len &&
                          memcmp(step.request, res.request.data, res.request.len) == 0,
                      "render %d (%s): the memo body differs from the stateless render", n, prov[n]);
            const char *req_end = step.output ? strchr(step.output, '\n') : NULL;
            /* the events: each stateless event line is among the step's lines, in order */
            const char *at = req_end;
            for (const char *e = res.events.data, *end = e ? e + res.events.len : NULL; e && e < end && at;) {
                const char *nl = memchr(e, '\n', (size_t)(end - e));
                size_t k = nl ? (size_t)(nl - e) : (size_t)(end - e);
                char *l = malloc(k + 1);
                memcpy(l, e, k);
                l[k] = '\0';
                at = strstr(at, l);
                CHECK_MSG(at != NULL, "render %d (%s): event missing: %s", n, prov[n], l);
                if (at) at += k;
                free(l);
                e = nl ? nl + 1 : end;
            }
            if (n == 0) CHECK(res.request.len && strstr(res.request.data, "cache_control") != NULL);
            quire_render_result_free(&res);
            n++;
        }
        quire_state_free(before);
    }
    CHECK_INT(n, 7);
    printf("target switches: %d renders compared with the stateless ones\n", n);
    quire_replay_free(r);
}

int main(void) {
    switch_keys();
    stale_keys();
    beta_headers();
    size_t len;
    char *log = make_log(240, 120, false, &len);
    const char *provs[][2] = {{"anthropic", "claude-sonnet-4-5"}, {"openai", "gpt-4o"}, {"openai", "gpt-5"}, {"deepseek", NULL}};
    for (size_t i = 0; i < sizeof provs / sizeof *provs; i++) {
        run(log, len, provs[i][0], provs[i][1], false, (size_t)1 << 20, false);
        run(log, len, provs[i][0], provs[i][1], true, 0, false);
    }
    free(log);
    /* mid-conversation system messages, blocks the rules drop: the prefix
     * ends before what the rules change and before what may regroup */
    log = make_log(240, 120, true, &len);
    for (size_t i = 0; i < sizeof provs / sizeof *provs; i++) {
        run(log, len, provs[i][0], provs[i][1], false, (size_t)1 << 20, true);
        run(log, len, provs[i][0], provs[i][1], true, (size_t)1 << 20, true);
    }
    free(log);
    TEST_MAIN_END();
}
